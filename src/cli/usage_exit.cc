#include "cli/usage_exit.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "os/terminal.h"

namespace cgov::cli {
namespace {

// CLI11's layout, its right column and the description and footer wrapped at kHelpWidth.
class WrappingFormatter : public CLI::Formatter {
 public:
  // CLI11's two columns, the left one broken too when it is wider than the page (a long
  // default and its environment variable), continued six columns in.
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    const size_t column = get_column_width();
    std::string left = "  " + WrapText(make_option_name(opt, is_positional) + make_option_opts(opt),
                                       kHelpWidth - 8);
    for (size_t at = left.find('\n'); at != std::string::npos; at = left.find('\n', at + 1)) {
      left.insert(at + 1, "        ");
    }
    const std::string desc = make_option_desc(opt);
    std::string out = left;
    const size_t last_line =
        left.size() - (left.rfind('\n') == std::string::npos ? 0 : left.rfind('\n') + 1);
    if (!desc.empty()) {
      if (last_line < column) {
        out += std::string(column - last_line, ' ');
      } else {
        out += '\n' + std::string(column, ' ');
      }
      for (char c : desc) {
        out += c;
        if (c == '\n') out += std::string(column, ' ');
      }
    }
    return out + '\n';
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    const size_t column = get_column_width();
    return WrapText(CLI::Formatter::make_option_desc(opt),
                    kHelpWidth > column + 20 ? kHelpWidth - column : 20);
  }
  std::string make_description(const CLI::App* app) const override {
    return WrapText(CLI::Formatter::make_description(app), kHelpWidth);
  }
  std::string make_footer(const CLI::App* app) const override {
    return WrapText(CLI::Formatter::make_footer(app), kHelpWidth);
  }
};

// The long option nearest to `typed` ("--fomat": "--format"), or "".
std::string NearestOption(const CLI::App& app, std::string_view typed) {
  const size_t eq = typed.find('=');
  if (eq != std::string_view::npos) typed = typed.substr(0, eq);
  while (typed.starts_with('-')) typed.remove_prefix(1);
  if (typed.empty()) return "";
  std::string best;
  size_t best_distance = 3;  // at most 2 edits, or a prefix
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      const size_t distance = name.starts_with(typed) ? 0 : EditDistance(typed, name);
      if (distance < best_distance) {
        best_distance = distance;
        best = "--" + name;
      }
    }
  }
  return best;
}

}  // namespace

std::string WrapText(std::string_view text, size_t width) {
  std::string out;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    // Lines that are already short, and indented ones (examples, tables), stay as they are.
    while (line.size() > width && !line.starts_with(' ')) {
      size_t cut = line.rfind(' ', width);
      if (cut != std::string_view::npos && cut > 0) {
        out.append(line.substr(0, cut));
        out += '\n';
        line.remove_prefix(cut + 1);
        continue;
      }
      // One word wider than the page (a list of labels): after its last , or ; that fits.
      const size_t sep = line.substr(0, width).find_last_of(",;");
      if (sep == std::string_view::npos || sep == 0) break;
      out.append(line.substr(0, sep + 1));
      out += '\n';
      line.remove_prefix(sep + 1);
    }
    out.append(line);
    if (newline != std::string_view::npos) out += '\n';
  }
  return out;
}

std::string UsageMessage(const CLI::App& app, const CLI::ParseError& e) {
  // "cgov report", or "cgov run" of "cgov run [options] -- COMMAND [ARG]...".
  std::string command = app.get_name();
  if (const size_t second = command.find(' ', command.find(' ') + 1); second != std::string::npos) {
    command.resize(second);
  }
  std::string what = e.what();
  std::string hint = fmt::format("`{} --help` lists the options", command);
  constexpr std::string_view kExtra = "The following argument was not expected: ";
  constexpr std::string_view kExtras = "The following arguments were not expected: ";
  std::string_view rest;
  if (what.starts_with(kExtra)) rest = std::string_view(what).substr(kExtra.size());
  if (what.starts_with(kExtras)) rest = std::string_view(what).substr(kExtras.size());
  if (!rest.empty()) {
    // The words left over (CLI11 lists them last first): an unknown option is named before a
    // stray value, as it is the likelier cause of both.
    std::string option, value;
    for (size_t at = 0; at < rest.size();) {
      const size_t end = std::min(rest.find(' ', at), rest.size());
      const std::string word(rest.substr(at, end - at));
      if (word.starts_with('-') && word.size() > 1) option = word;
      if (!word.empty() && !word.starts_with('-') && value.empty()) value = word;
      at = end + 1;
    }
    if (!option.empty()) {
      const std::string nearest = NearestOption(app, option);
      what = fmt::format("unknown option {}", option);
      if (!nearest.empty()) hint = fmt::format("did you mean {}? ", nearest) + hint;
    } else {
      what = fmt::format("unexpected argument '{}'", value);
      hint = "an option takes one value: quote a value that has spaces; " + hint;
    }
  }
  return fmt::format("{}: {}\n{}\n", command, what, hint);
}

void AddColorFlag(CLI::App& app) {
  app.add_option_function<std::string>(
         "--color",
         [](const std::string& value) {
           ColorChoice choice = ColorChoice::kAuto;
           ParseColorChoice(value, &choice);
           SetColorChoice(choice);
         },
         "colour in the text output: auto (on a terminal, unless NO_COLOR is set or "
         "CLICOLOR_FORCE forces it), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

int UsageExit(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {  // --help
    app.formatter(std::make_shared<WrappingFormatter>());
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  const std::string message = UsageMessage(app, e);
  std::fwrite(message.data(), 1, message.size(), stderr);
  return kExitUsage;
}

}  // namespace cgov::cli
