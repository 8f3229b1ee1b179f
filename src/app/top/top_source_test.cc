#include "app/top/top_source.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(TopPolicy, TheVerdictSaysWhenThePolicyActsOrWhyItNeverWill) {
  PolicyRule rule;
  rule.name = "nb";
  rule.idle_held_ms = 4 * 3'600'000;
  PolicyProcess p;
  EXPECT_EQ(PolicyVerdict(p, &rule, 0), "never: owner unknown");
  p.uid = p.euid = p.suid = 1002;
  p.user = "bob";
  EXPECT_EQ(PolicyVerdict(p, nullptr, 0), "no policy");
  EXPECT_EQ(PolicyVerdict(p, &rule, 3'600'000), "nb in 3h");
  EXPECT_EQ(PolicyVerdict(p, &rule, 5 * 3'600'000), "nb: due");
  p.suid = 0;
  EXPECT_EQ(PolicyVerdict(p, &rule, 0), "never: root's rights");
  PolicyActionRecord a;
  a.ts_ms = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
  a.action = "sigterm";
  a.policy = "nb";
  EXPECT_EQ(PolicyStepText(a), "sigterm 22:13 (nb)");
}

}  // namespace
}  // namespace cgov
