#include "os/command_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cgov {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(RunCommand, CapturesStdoutAndSaysHowACommandFailed) {
  auto ok = RunCommand({"printf", "a|b\\n1|2\\n"}, milliseconds(5000), 1 << 20);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->out, "a|b\n1|2\n");
  auto failed = RunCommand({"sh", "-c", "echo partial; echo 'sacct: error: no db' >&2; exit 3"},
                           milliseconds(5000), 1 << 20);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "sh: exited 3: sacct: error: no db");
  auto missing = RunCommand({"cgov-no-such-command"}, milliseconds(5000), 1 << 20);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("not found on PATH"));
  auto slow = RunCommand({"sleep", "10"}, milliseconds(300), 1 << 20);
  EXPECT_THAT(slow.status().message(), HasSubstr("killed"));
  auto big = RunCommand({"sh", "-c", "head -c 3000000 /dev/zero"}, milliseconds(5000), 1 << 20);
  EXPECT_THAT(big.status().message(), HasSubstr("more than 1 MiB"));
  auto stdin_closed = RunCommand({"cat"}, milliseconds(5000), 1 << 20);
  ASSERT_TRUE(stdin_closed.ok()) << "stdin is /dev/null: cat ends";
  EXPECT_EQ(stdin_closed->out, "");
}

}  // namespace
}  // namespace cgov
