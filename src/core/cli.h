// core/cli.h — a strict command-line parser shared by every program of the project.
//
// Strict means: an unknown flag, a missing value, a malformed or out-of-range number, or a value
// outside a flag's choices is one zt::Error line, never a silent default or a crash. Flags take
// the forms `--name value` and `--name=value`. `--help` prints every flag with its default: the
// target's value when the flag is declared, or a text for defaults derived from other flags
// (`--min-lr`: "--lr / 10"), so a user never has to read the source to know what runs.
// It is not a general-purpose library: no short options, no positional arguments except what
// follows a literal `--`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zt {

/// Declares a program's flags, parses argv against them, and prints usage.
class ArgParser {
 public:
  /// @param program the program name used in usage and error lines.
  /// @param summary one sentence describing what the program does.
  ArgParser(std::string program, std::string summary);

  /// A boolean switch: present means true. @param name flag without dashes. @param out target.
  /// @param help one-line description.
  void add_flag(const std::string& name, bool* out, const std::string& help);
  /// A signed integer in [min, max]. @param name flag without dashes. @param out target (its
  /// current value is the default). @param help one-line description. @param min smallest
  /// accepted value. @param max largest accepted value.
  void add_int(const std::string& name, int64_t* out, const std::string& help, int64_t min = INT64_MIN,
               int64_t max = INT64_MAX);
  /// An integer whose default is derived from other settings when the flag is absent.
  /// @param name flag without dashes. @param out target (left empty when the flag is absent).
  /// @param help one-line description. @param default_text how the default is derived, for --help.
  /// @param min smallest accepted value. @param max largest accepted value.
  void add_int(const std::string& name, std::optional<int64_t>* out, const std::string& help,
               const std::string& default_text, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  /// A finite decimal number in [min, max]. @param name flag without dashes. @param out target.
  /// @param help one-line description. @param min smallest accepted. @param max largest accepted.
  void add_double(const std::string& name, double* out, const std::string& help, double min = -1e308,
                  double max = 1e308);
  /// A number whose default is derived from other settings when the flag is absent.
  /// @param name flag without dashes. @param out target (left empty when the flag is absent).
  /// @param help one-line description. @param default_text how the default is derived, for --help.
  /// @param min smallest accepted. @param max largest accepted.
  void add_double(const std::string& name, std::optional<double>* out, const std::string& help,
                  const std::string& default_text, double min = -1e308, double max = 1e308);
  /// A free-form string. @param name flag without dashes. @param out target.
  /// @param help one-line description.
  void add_string(const std::string& name, std::string* out, const std::string& help);
  /// A string from a fixed set. @param name flag without dashes. @param out target.
  /// @param choices the accepted values. @param help one-line description.
  void add_choice(const std::string& name, std::string* out, std::vector<std::string> choices, const std::string& help);

  /// Replace the default --help shows for a flag (a derived default, "required", "a free port").
  /// @param name a declared flag without dashes. @param text what --help prints after "default: ".
  void set_default_text(const std::string& name, const std::string& text);

  /// A choice whose value may be left out: `--name` alone means `implicit`, `--name=v` or
  /// `--name v` (v one of the choices) sets v. @param name flag without dashes. @param out target
  /// (its current value is the default). @param choices the accepted values.
  /// @param implicit the value of the bare flag (one of the choices). @param help one-line description.
  void add_optional_choice(const std::string& name, std::string* out, std::vector<std::string> choices,
                           const std::string& implicit, const std::string& help);

  /// Parse argv. Throws zt::Error on any bad input.
  /// @param argc argument count as given to main.
  /// @param argv argument vector as given to main.
  /// @return false when --help was asked for (usage has been printed), true otherwise.
  bool parse(int argc, char** argv);

  /// Whether a flag appeared on the command line. @param name flag without dashes.
  /// @return true if it was given.
  bool given(const std::string& name) const;
  /// The flags that appeared on the command line, in declaration order. @return their names.
  std::vector<std::string> given_flags() const;
  /// Arguments after a literal `--`, in order. @return them (empty if there was no `--`).
  const std::vector<std::string>& rest() const { return rest_; }
  /// The usage text. @return usage, one line per flag, each with its default.
  std::string usage() const;

 private:
  struct Option {
    std::string name, help, kind;
    std::string default_text;  // shown by --help as "(default: ...)"
    std::function<void(const std::string&)> set;
    bool takes_value = true;
    bool seen = false;
    std::string implicit;              // optional value: what the bare flag means ("" = required)
    std::vector<std::string> choices;  // optional value: the words that are taken as its value
  };
  Option* find(const std::string& name);
  void add(Option option);
  std::string program_, summary_;
  std::vector<Option> options_;
  std::vector<std::string> rest_;
};

/// Parse a whole string as a signed integer (no sign games, no trailing characters).
/// @param text the characters to parse. @param what name used in the error message.
/// @return the value.
int64_t parse_int_strict(const std::string& text, const std::string& what);
/// Parse a whole string as a finite decimal number. @param text the characters to parse.
/// @param what name used in the error message. @return the value.
double parse_double_strict(const std::string& text, const std::string& what);

/// Run a program body, turning a zt::Error (or any std::exception) into one line on stderr,
/// prefixed with the program name (unless announce_error printed it already), and exit status 2
/// (kExitError), or 3 (kExitPeerFailed) for a zt::PeerFailed: another rank's failure
/// (core/error_report.h).
/// @param program name printed before the message. @param body the program; its return value
/// is the exit status when it does not throw.
/// @return the exit status.
int run_main(const std::string& program, const std::function<int()>& body);

}  // namespace zt
