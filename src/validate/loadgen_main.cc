// cgov-loadgen: known GPU loads for the validation kit (scripts/gpu-validate), and the judgement
// of what cgov measured of them. Not part of cgov itself.
//
//   cgov-loadgen play PATTERN [--duration 20s] [--device N] [--hold-mib M] [--cuda-lib PATH]
//   cgov-loadgen compare --pattern P --samples samples.jsonl --smi smi.csv [--device N] [--hold-mib
//   M] cgov-loadgen patterns | header
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/duration.h"
#include "validate/compare.h"
#include "validate/cuda_load.h"
#include "validate/load_pattern.h"

namespace cgov::validate {
namespace {

constexpr int64_t kMaxKernelMs = 250;  // a long busy stretch is cut so a signal ends it soon
constexpr size_t kMaxInputBytes = 256u << 20;

// A regular file of at most 256 MiB (a FIFO would block, /dev/zero never end).
Result<std::string> ReadInput(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFound(fmt::format("{}: cannot be read", path));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(fmt::format("{}: not a regular file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot be read", path));
  std::string text(kMaxInputBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxInputBytes)
    return InvalidArgument(fmt::format("{}: larger than 256 MiB", path));
  return text;
}

int Play(const std::string& name, const std::string& duration_text, int device, uint64_t hold_mib,
         const std::string& cuda_lib) {
  Result<LoadPattern> pattern = ParsePattern(name, hold_mib << 20);
  Result<std::chrono::milliseconds> duration = ParseDuration(duration_text);
  if (!pattern.ok() || !duration.ok()) {
    fmt::print(stderr, "cgov-loadgen: {}\n",
               (!pattern.ok() ? pattern.status() : duration.status()).message());
    return 2;
  }
  std::unique_ptr<CudaLoad> load;
  if (pattern->context) {
    Result<std::unique_ptr<CudaLoad>> opened = CudaLoad::Open(device, cuda_lib);
    if (!opened.ok()) {
      fmt::print(stderr, "cgov-loadgen: {}\n", opened.status().message());
      return 1;
    }
    load = std::move(opened).value();
    if (Status held = load->Hold(pattern->hold_bytes); !held.ok()) {
      fmt::print(stderr, "cgov-loadgen: {}\n", held.message());
      return 1;
    }
  }
  fmt::print(stderr, "cgov-loadgen: {} for {} on device {}: {}\n", pattern->name,
             FormatDuration(*duration), device, pattern->description);
  // One cycle's schedule at a time: a long --duration never builds a long list.
  const int64_t cycle = pattern->busy_ms + pattern->idle_ms;
  for (int64_t t = 0; t < duration->count(); t += cycle) {
    for (const Segment& s : Schedule(*pattern, std::min(cycle, duration->count() - t))) {
      if (!s.busy) {
        std::this_thread::sleep_for(std::chrono::milliseconds(s.ms));
        continue;
      }
      for (int64_t left = s.ms; left > 0; left -= kMaxKernelMs) {
        if (Status busy = load->Busy(std::min(left, kMaxKernelMs)); !busy.ok()) {
          fmt::print(stderr, "cgov-loadgen: {}\n", busy.message());
          return 1;
        }
      }
    }
  }
  return 0;
}

int Compare(const std::string& name, const std::string& samples_path, const std::string& smi_path,
            int device, uint64_t hold_mib) {
  Result<LoadPattern> pattern = ParsePattern(name, hold_mib << 20);
  if (!pattern.ok()) {
    fmt::print(stderr, "cgov-loadgen compare: {}\n", pattern.status().message());
    return 2;
  }
  Result<std::string> samples_text = ReadInput(samples_path);
  Result<std::string> smi_text = ReadInput(smi_path);
  for (const auto* r : {&samples_text, &smi_text}) {
    if (!r->ok()) {
      fmt::print(stderr, "cgov-loadgen compare: {}\n", r->status().message());
      return 2;
    }
  }
  Result<std::vector<CgovGpuTick>> ticks = ParseCgovSamples(*samples_text, device);
  if (!ticks.ok()) {
    fmt::print(stderr, "cgov-loadgen compare: {}: {}\n", samples_path, ticks.status().message());
    return 2;
  }
  Result<std::vector<SmiRow>> rows = ParseSmiCsv(*smi_text);
  if (!rows.ok()) {
    fmt::print(stderr, "cgov-loadgen compare: {}: {}\n", smi_path, rows.status().message());
    return 2;
  }
  std::vector<SmiRow> on_device;
  for (const SmiRow& r : *rows) {
    if (r.index == device) on_device.push_back(r);
  }
  std::vector<Check> checks = ComparePattern(*pattern, *ticks, on_device, CompareOptions{});
  fmt::print("{}", MarkdownRows(pattern->name, checks));
  for (const Check& c : checks) {
    if (!c.pass) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cgov::validate

int main(int argc, char** argv) {
  using namespace cgov::validate;
  CLI::App app{
      "Known GPU loads for validating cgov on a real GPU (scripts/gpu-validate), and the "
      "comparison of what cgov measured with the pattern and with nvidia-smi.",
      "cgov-loadgen"};
  app.require_subcommand(1);
  std::string pattern, duration = "20s", cuda_lib, samples, smi;
  int device = 0;
  uint64_t hold_mib = 2048;
  CLI::App* play = app.add_subcommand("play", "play a load pattern on one GPU");
  play->add_option("pattern", pattern, "idle, held, duty5..duty95, bursty, full")->required();
  play->add_option("--duration", duration, "how long (200ms 1s 30s 5m)")->capture_default_str();
  play->add_option("--device", device, "CUDA device ordinal")->capture_default_str();
  play->add_option("--hold-mib", hold_mib, "device memory the context holds")
      ->capture_default_str();
  play->add_option("--cuda-lib", cuda_lib, "the CUDA driver library (default libcuda.so.1)");
  CLI::App* compare =
      app.add_subcommand("compare",
                         "judge cgov's samples.jsonl of a pattern against it and nvidia-smi's CSV; "
                         "prints Markdown rows; exit 1 when a check fails");
  compare->add_option("--pattern", pattern, "the pattern that was played")->required();
  compare->add_option("--samples", samples, "cgov run's samples.jsonl")->required();
  compare
      ->add_option("--smi", smi,
                   "nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,"
                   "power.draw --format=csv,noheader,nounits (TZ=UTC)")
      ->required();
  compare->add_option("--device", device, "NVML index of the loaded GPU")->capture_default_str();
  compare->add_option("--hold-mib", hold_mib, "as given to play")->capture_default_str();
  CLI::App* patterns = app.add_subcommand("patterns", "list the patterns gpu-validate plays");
  CLI::App* header = app.add_subcommand("header", "print the header of compare's Markdown table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (*play) return Play(pattern, duration, device, hold_mib, cuda_lib);
  if (*patterns) {
    for (const std::string& name : DefaultPatternNames()) fmt::print("{}\n", name);
    return 0;
  }
  if (*header) {
    fmt::print("{}", MarkdownHeader());
    return 0;
  }
  return Compare(pattern, samples, smi, device, hold_mib);
}
