#include "cli/run.h"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "app/run/run_analysis.h"
#include "app/run/run_outputs.h"
#include "os/job_process.h"

namespace cgov::cli {
namespace {

Result<RunOptions> Parse(std::vector<std::string> args, int* help) {
  args.insert(args.begin(), "run");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseRunOptions(static_cast<int>(argv.size()), argv.data(), help);
}

TEST(ParseRunOptions, DefaultsAndFlags) {
  unsetenv("CGOV_TAGS");
  int help = -1;
  auto o = Parse({"--interval", "250ms", "--tag", "project=x", "--quiet", "--", "python", "-u",
                  "train.py", "--epochs", "3"},
                 &help);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->interval.count(), 250);
  EXPECT_TRUE(o->quiet);
  EXPECT_EQ(o->tags.at("project"), "x");
  EXPECT_EQ(o->command, (std::vector<std::string>{"python", "-u", "train.py", "--epochs", "3"}))
      << "everything after -- is the job's, flags included";
  auto d = Parse({"--", "true"}, &help);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->interval.count(), 1000);
  EXPECT_EQ(d->out_dir, "");
}

TEST(ParseRunOptions, IntervalBounds) {
  int help = -1;
  EXPECT_TRUE(Parse({"--interval", "100ms", "--", "x"}, &help).ok());
  EXPECT_TRUE(Parse({"--interval", "1h", "--", "x"}, &help).ok());
  EXPECT_FALSE(Parse({"--interval", "99ms", "--", "x"}, &help).ok());
  EXPECT_FALSE(Parse({"--interval", "2h", "--", "x"}, &help).ok());
}

// The built-in catalog is parsed when first used (after the job started), not by the parsing
// of the flags, unless --instance-type must be checked against it before the job starts.
TEST(ParseRunOptions, TheBuiltInCatalogIsLeftForLaterAndAnInstanceTypeIsStillChecked) {
  int help = -1;
  auto plain = Parse({"--", "x"}, &help);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->catalog.has_value());
  EXPECT_EQ(&plain->Catalog(), &BuiltinCatalog());
  auto typo = Parse({"--instance-type", "p5.48xlargee", "--", "x"}, &help);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("p5.48xlargee"), std::string::npos)
      << typo.status().message();
  EXPECT_TRUE(Parse({"--instance-type", "p5.48xlarge", "--", "x"}, &help).ok());
  auto missing = Parse({"--price-catalog", "/nonexistent/prices.json", "--", "x"}, &help);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/prices.json"), std::string::npos)
      << missing.status().message();
}

TEST(CommandLabel, SafeForADirectoryName) {
  EXPECT_EQ(CommandLabel("/usr/bin/python3.11"), "python3.11");
  EXPECT_EQ(CommandLabel("./my job (v2)"), "my_job__v2_");
  EXPECT_EQ(CommandLabel(".."), "job");
  EXPECT_EQ(CommandLabel("dir/"), "job");
}

TEST(JobProcess, ExitCodesFromWaitStatuses) {
  EXPECT_EQ(ExitCodeFromWaitStatus(0), 0);
  EXPECT_EQ(ExitCodeFromWaitStatus(3 << 8), 3);
  EXPECT_EQ(ExitCodeFromWaitStatus(255 << 8), 255);
  EXPECT_EQ(ExitCodeFromWaitStatus(SIGTERM), 128 + SIGTERM);
  EXPECT_EQ(ExitCodeFromWaitStatus(SIGKILL), 137);
  EXPECT_EQ(ExitCodeForSpawnError(StatusCode::kNotFound), 127);
  EXPECT_EQ(ExitCodeForSpawnError(StatusCode::kPermissionDenied), 126);
}

TEST(JobProcess, ForwardOnlyWhatAProcessSent) {
  siginfo_t info{};
  info.si_code = SI_USER;
  EXPECT_TRUE(ShouldForward(info));
  info.si_code = SI_QUEUE;
  EXPECT_TRUE(ShouldForward(info));
  info.si_code = SI_TKILL;
  EXPECT_TRUE(ShouldForward(info));
  info.si_code = SI_KERNEL;  // the terminal's ^C, already delivered to the job's group
  EXPECT_FALSE(ShouldForward(info));
}

}  // namespace
}  // namespace cgov::cli

namespace cgov::cli {
namespace {

TEST(ParseProgress, LastNonEmptyLineIsTheCumulativeWork) {
  auto p = ParseProgress("100\n2500 samples\n\n", "progress.log");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->has_value());
  EXPECT_DOUBLE_EQ((*p)->first, 2500);
  EXPECT_EQ((*p)->second, "samples");
  auto tokens = ParseProgress("1.5e9 tokens", "progress.log");
  EXPECT_DOUBLE_EQ((*tokens)->first, 1.5e9);
  EXPECT_EQ((*tokens)->second, "tokens");
  auto bare = ParseProgress("42\n", "progress.log");
  EXPECT_EQ((*bare)->second, "");
  EXPECT_FALSE(ParseProgress("", "progress.log")->has_value());
  // fuzz/progress_fuzz holds work finite: strtod read "inf" as infinite work (1e999 overflows).
  for (const char* infinite : {"inf steps\n", "INFINITY\n", "1e999 tokens\n"}) {
    EXPECT_FALSE(ParseProgress(infinite, "progress.log").ok()) << infinite;
  }
}

// The line is the job's: any bytes, any length. The error quotes an escaped excerpt (issue 21,
// item 2: a non-UTF-8 line aborted cgov; a 300 MB line was copied whole into the summary).
TEST(ParseProgress, ABadLineIsQuotedAsAShortEscapedExcerpt) {
  auto bad = ParseProgress("10\n\xff\x1b[2J" + std::string(100'000, 'x') + "\n", "p.log");
  ASSERT_FALSE(bad.ok());
  const std::string message(bad.status().message());
  EXPECT_NE(message.find("p.log:2: progress line '\\xff\\x1b[2Jxxx"), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

TEST(ParseProgress, BadLinesNameFileAndLine) {
  auto bad = ParseProgress("10\nlots\n", "run/progress.log");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "run/progress.log:2: progress line 'lots': write the cumulative work as \"N\" or \"N "
            "samples|tokens|steps\" (0 <= N <= 1e15)");
  EXPECT_FALSE(ParseProgress("10 images\n", "p").ok());
  EXPECT_FALSE(ParseProgress("-5\n", "p").ok());
}

// Issue 58, 3: 1e308 drove the daemon's work counter to +Inf. Work is bounded where it is read,
// and a file read for another user is never quoted (its content stays out of every log).
TEST(ParseProgress, WorkIsBoundedAndAnotherUsersLineIsNeverQuoted) {
  EXPECT_TRUE(ParseProgress("1e15 tokens\n", "p").ok());
  for (const char* huge : {"1e308 samples\n", "1.0000001e15\n", "1e16 steps\n"}) {
    EXPECT_FALSE(ParseProgress(huge, "p").ok()) << huge;
  }
  auto secret = ParseProgress("root:$6$salt$hash:19000:0:99999:7:::\n", "/x/etc/shadow", false);
  ASSERT_FALSE(secret.ok());
  const std::string message(secret.status().message());
  EXPECT_EQ(message.find("root:"), std::string::npos) << message;
  EXPECT_NE(message.find("/x/etc/shadow:1: progress line not understood"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace cgov::cli
