// A webhook receiver on loopback for the end-to-end tests (tests/fake_webhook/receiver.py),
// whose answer a test switches while cgov runs, and the URL file cgov reads a sink's URL from.
#ifndef CGOV_TESTS_E2E_WEBHOOK_RECEIVER_H_
#define CGOV_TESTS_E2E_WEBHOOK_RECEIVER_H_

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"

namespace cgov::e2e {

struct Receiver {
  Started process;
  std::string url, log, mode_file;

  void Mode(const std::string& mode) const { WriteFile(mode_file, mode + "\n"); }
  std::vector<nlohmann::json> Requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded()) out.push_back(std::move(j));
    }
    return out;
  }
  // Requests answered 2xx (the ones cgov counts as delivered).
  std::vector<nlohmann::json> Delivered() const {
    std::vector<nlohmann::json> out;
    for (nlohmann::json& r : Requests()) {
      if (r["status"] == 200) out.push_back(std::move(r));
    }
    return out;
  }
  ~Receiver() {
    if (process.pid > 0) {
      kill(process.pid, SIGKILL);
      WaitProgram(process, 5);
    }
  }
};

inline std::unique_ptr<Receiver> StartReceiver(const TempDir& dir, const std::string& name,
                                               const std::string& mode = "ok") {
  auto r = std::make_unique<Receiver>();
  r->log = dir / (name + ".log");
  r->mode_file = dir / (name + ".mode");
  r->Mode(mode);
  const std::string port_file = dir / (name + ".port");
  r->process = StartProgram(
      {"/usr/bin/python3", DocsFile("../tests/fake_webhook/receiver.py"), "--mode-file",
       r->mode_file, "--log", r->log, "--port-file", port_file, "--max-seconds", "240"},
      {});
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, 10));
  r->url = "http://127.0.0.1:" + ReadFile(port_file);
  return r;
}

// A URL file as cgov requires it: one line, readable by its owner only.
inline std::string UrlFile(const TempDir& dir, const std::string& name, const std::string& url) {
  const std::string path = dir / (name + ".url");
  WriteFile(path, url + "\n");
  chmod(path.c_str(), 0600);
  return path;
}

}  // namespace cgov::e2e

#endif  // CGOV_TESTS_E2E_WEBHOOK_RECEIVER_H_
