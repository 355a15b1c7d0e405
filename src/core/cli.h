// core/cli.h — a strict command-line parser shared by every program of the project, and the
// registry of a program's flags.
//
// Strict means: an unknown flag, a missing value, a malformed or out-of-range number, or a value
// outside a flag's choices is one zt::Error line, never a silent default or a crash. Flags take
// the forms `--name value` and `--name=value`. `--help` prints every flag with its default: the
// target's value when the flag is declared, or a text for defaults derived from other flags
// (`--min-lr`: "--lr / 10"), so a user never has to read the source to know what runs.
// A registry means: each declared flag also prints its target's current value back as flag text
// (as_flags: what `zero-train --print-config` prints) and says whether it is one of the settings
// every rank of a job must share (hashed_settings: what zero/config_check.h hashes). A program
// declares each flag once; parsing, --help, printing and hashing all walk that one declaration.
// --help lists the flags by topic (group(): a heading and an example command per group), each line
// at most 100 columns (kHelpColumns), descriptions wrapped under a hanging indent; an unknown flag's
// error names the declared flag it most likely meant (suggestion()).
// It is not a general-purpose library: no short options, no positional arguments except what
// follows a literal `--`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/words.h"

namespace zt {

/// The widest line --help prints: longer descriptions wrap onto lines of their own.
inline constexpr std::size_t kHelpColumns = 100;

/// Declares a program's flags, parses argv against them, prints usage, and prints or hashes the
/// targets' current values (the registry of the file comment).
class ArgParser {
 public:
  /// One declared flag: how its value is read, how it is printed back, what --help says.
  struct Flag {
    std::string name;          ///< without dashes
    std::string help;          ///< one-line description
    std::string kind;          ///< what --help shows after the name: INT, NUM, STR, a|b, [a|b]; "" for a switch
    std::string default_text;  ///< shown by --help as "(default: ...)"
    std::function<void(const std::string&)> set;  ///< parse a value into the target (zt::Error if bad)
    std::function<std::string()> show;            ///< the target's value as flag text; "" = unset
    std::function<std::string()> hash_text;       ///< what the hash sees; empty function: show
    std::string default_value;                    ///< show() when the flag was declared
    bool takes_value = true;                      ///< false for a switch (present means on)
    bool hashed = true;                           ///< every rank of a job must share it (hashed_settings)
    bool input_only = false;                      ///< names an input or a mode, not a setting: never printed nor hashed
    bool seen = false;                            ///< given on the command line
    std::string implicit;                         ///< optional value: what the bare flag means ("" = value required)
    std::vector<std::string> choices;             ///< optional value: the words taken as its value
    std::vector<std::string> samples;             ///< values it accepts: its choices, or the ends of its range
    std::size_t group = 0;                        ///< its topic: an index into the groups group() opened
  };

  /// A topic of --help: a heading, and a command that shows some of its flags in use.
  struct Group {
    std::string title;    ///< the heading ("" for the flags declared before any group: "flags")
    std::string example;  ///< one command line ("" for none)
  };

  /// The handle add_* returns: the attributes of the flag just declared, set in the same
  /// statement (`p.add_string(...).not_hashed();`). Valid until the next declaration.
  class Declared {
   public:
    /// @param parser the parser. @param index the flag's position in it.
    Declared(ArgParser& parser, std::size_t index) : parser_(parser), index_(index) {}
    /// A setting a rank may hold alone (an output path, an address, a timeout, a capacity): left
    /// out of hashed_settings. @return this handle.
    Declared& not_hashed();
    /// Hash a resolved value instead of the flag's text (a derived default such as --min-lr's
    /// "--lr / 10": ranks must agree on what runs, given or derived). @param text the resolved
    /// value as text. @return this handle.
    Declared& hash_as(std::function<std::string()> text);
    /// An input or a mode of the program (a file to read, a preset that sets other flags,
    /// "print and exit"), not a setting of the run: as_flags and hashed_settings leave it out
    /// (what it sets is printed and hashed as those flags). @return this handle.
    Declared& input_only();
    /// The target holds a resolved value even when the flag is absent: setting the flag also sets
    /// *marker, and the flag prints its value only while *marker is true. @param marker the
    /// target's "given" field. @return this handle.
    Declared& given_marker(bool* marker);

   private:
    ArgParser& parser_;
    std::size_t index_;
  };

  /// @param program the program name used in usage and error lines.
  /// @param summary one sentence describing what the program does.
  ArgParser(std::string program, std::string summary);

  /// A boolean switch: present means true. @param name flag without dashes. @param out target.
  /// @param help one-line description. @return the handle for its attributes.
  Declared add_flag(const std::string& name, bool* out, const std::string& help);
  /// A boolean written as a word: `--name on` or `--name off`. @param name flag without dashes.
  /// @param out target (its current value is the default). @param help one-line description.
  /// @return the handle for its attributes.
  Declared add_on_off(const std::string& name, bool* out, const std::string& help);
  /// A signed integer in [min, max]. @param name flag without dashes. @param out target (its
  /// current value is the default). @param help one-line description. @param min smallest
  /// accepted value. @param max largest accepted value. @return the handle for its attributes.
  Declared add_int(const std::string& name, int64_t* out, const std::string& help, int64_t min = INT64_MIN,
                   int64_t max = INT64_MAX);
  /// An integer whose default is derived from other settings when the flag is absent.
  /// @param name flag without dashes. @param out target (left empty when the flag is absent).
  /// @param help one-line description. @param default_text how the default is derived, for --help.
  /// @param min smallest accepted value. @param max largest accepted value.
  /// @return the handle for its attributes.
  Declared add_int(const std::string& name, std::optional<int64_t>* out, const std::string& help,
                   const std::string& default_text, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  /// A finite decimal number in [min, max]. @param name flag without dashes. @param out target.
  /// @param help one-line description. @param min smallest accepted. @param max largest accepted.
  /// @return the handle for its attributes.
  Declared add_double(const std::string& name, double* out, const std::string& help, double min = -1e308,
                      double max = 1e308);
  /// A number whose default is derived from other settings when the flag is absent.
  /// @param name flag without dashes. @param out target (left empty when the flag is absent).
  /// @param help one-line description. @param default_text how the default is derived, for --help.
  /// @param min smallest accepted. @param max largest accepted. @return the handle for its attributes.
  Declared add_double(const std::string& name, std::optional<double>* out, const std::string& help,
                      const std::string& default_text, double min = -1e308, double max = 1e308);
  /// A free-form string. @param name flag without dashes. @param out target.
  /// @param help one-line description. @return the handle for its attributes.
  Declared add_string(const std::string& name, std::string* out, const std::string& help);
  /// A string from a fixed set. @param name flag without dashes. @param out target.
  /// @param choices the accepted values. @param help one-line description.
  /// @return the handle for its attributes.
  Declared add_choice(const std::string& name, std::string* out, std::vector<std::string> choices,
                      const std::string& help);
  /// A closed choice parsed into an enum once (core/words.h: the enum's words() table lists the
  /// accepted words and prints the value back). @param name flag without dashes. @param out target
  /// (its current value is the default). @param help one-line description.
  /// @return the handle for its attributes.
  template <typename E>
  Declared add_enum(const std::string& name, E* out, const std::string& help) {
    return add_words(
        name, words_of<E>(), word_of(*out), help,
        [out, name](const std::string& v) { *out = parse_word<E>(v, "--" + name); }, [out] { return word_of(*out); });
  }
  /// A closed choice with a derived default: left empty when the flag is absent.
  /// @param name flag without dashes. @param out target. @param help one-line description.
  /// @param default_text how the default is derived, for --help. @return the handle for its attributes.
  template <typename E>
  Declared add_enum(const std::string& name, std::optional<E>* out, const std::string& help,
                    const std::string& default_text) {
    return add_words(
        name, words_of<E>(), default_text, help,
        [out, name](const std::string& v) { *out = parse_word<E>(v, "--" + name); },
        [out] { return *out ? word_of(**out) : std::string(); });
  }
  /// A closed choice whose value may be left out: `--name` alone means `implicit`, `--name=v` or
  /// `--name v` (v one of its words) sets v. @param name flag without dashes. @param out target
  /// (its current value is the default). @param implicit the value of the bare flag.
  /// @param help one-line description. @return the handle for its attributes.
  template <typename E>
  Declared add_optional_enum(const std::string& name, E* out, E implicit, const std::string& help) {
    Declared d = add_enum(name, out, help);
    make_value_optional(name, word_of(implicit));
    return d;
  }
  /// A value with its own grammar (e.g. `none | host | file:DIR`). @param name flag without
  /// dashes. @param kind what --help shows after the name. @param help one-line description.
  /// @param set parses a value into the target (zt::Error naming the flag if bad). @param show the
  /// target's value as flag text. @param samples values it accepts. @return the handle.
  Declared add_value(const std::string& name, const std::string& kind, const std::string& help,
                     std::function<void(const std::string&)> set, std::function<std::string()> show,
                     std::vector<std::string> samples);

  /// Open a topic: the flags declared next, until the next call, are listed under `title` in
  /// --help and --help-markdown, after `example`. Groups print in the order they are first named,
  /// the flags of each in declaration order; naming a group again reopens it, so a flag can join
  /// its topic without moving (declaration order is what as_flags and hashed_settings keep).
  /// Flags declared before any group belong to an untitled one, printed first, under "flags".
  /// @param title the heading. @param example a command using some of its flags; given once, when
  /// the group is first named ("" when reopening it).
  void group(const std::string& title, const std::string& example = "");

  /// Replace the default --help shows for a flag (a derived default, "required", "a free port").
  /// @param name a declared flag without dashes. @param text what --help prints after "default: ".
  void set_default_text(const std::string& name, const std::string& text);

  /// Parse argv. Throws zt::Error on any bad input.
  /// @param argc argument count as given to main.
  /// @param argv argument vector as given to main.
  /// @return false when --help was asked for (usage has been printed), true otherwise.
  bool parse(int argc, char** argv);

  /// Set a flag's value from another source than the command line (a preset, a config file's
  /// key): the same parsing, range and choices as `--name=text`, but the flag does not count as
  /// given. @param name a declared flag without dashes. @param text its value (ignored by a switch,
  /// which it turns on).
  void assign(const std::string& name, const std::string& text);
  /// A flag's current value as flag text. @param name a declared flag without dashes.
  /// @return the text ("" when unset; "on" or "off" for a switch).
  std::string value_text(const std::string& name) const;

  /// The flags whose targets differ from their values at declaration, as a command line, in
  /// declaration order; input-only flags are left out. Declared on a default-constructed target
  /// that is then given the settings, this is the settings as flags (--print-config).
  /// @return e.g. "--stage 2 --checkpoint-activations" ("" when nothing differs).
  std::string as_flags() const;
  /// The hashed flags' values, each as "name=value" ended by the unit separator 0x1f, in
  /// declaration order: what the ranks of a job must agree on (a resolved value where hash_as
  /// says so). @return the text to hash.
  std::string hashed_settings() const;

  /// Whether a flag appeared on the command line. @param name flag without dashes.
  /// @return true if it was given.
  bool given(const std::string& name) const;
  /// The flags that appeared on the command line, in declaration order. @return their names.
  std::vector<std::string> given_flags() const;
  /// Arguments after a literal `--`, in order. @return them (empty if there was no `--`).
  const std::vector<std::string>& rest() const { return rest_; }
  /// The usage text (--help). @return usage: the summary, then each group's heading, its example
  /// and its flags, each flag with its default; no line wider than kHelpColumns unless one word is.
  std::string usage() const;
  /// The usage as Markdown (--help-markdown): the usage line and the summary, then one table per
  /// group (name, value, default, description), a titled group under a `###` heading and its
  /// example. @return the text.
  std::string markdown_usage() const;
  /// What an unknown flag most likely meant: the declared names (and help, help-markdown) nearest
  /// to it by edit distance (closest_names; none when more than 3 are equally near), else the
  /// one declared name that begins with it, if only one does and it has at least 3 characters.
  /// @param name the unknown flag without dashes.
  /// @return e.g. "--global-batch", "--beta1 or --beta2"; "" when nothing is close.
  std::string suggestion(const std::string& name) const;
  /// Every declared flag, in declaration order. @return them.
  const std::vector<Flag>& flags() const { return options_; }
  /// A declared flag. @param name without dashes. @return it, or nullptr if none has that name.
  const Flag* flag(const std::string& name) const;

 private:
  template <typename E>
  static std::vector<std::string> words_of() {
    std::vector<std::string> list;
    for (const auto& w : words(E{})) list.emplace_back(w.text);
    return list;
  }
  Declared add_words(const std::string& name, std::vector<std::string> choices, const std::string& default_text,
                     const std::string& help, std::function<void(const std::string&)> set,
                     std::function<std::string()> show);
  void make_value_optional(const std::string& name, const std::string& implicit);
  Flag* find(const std::string& name);
  Flag& declared(const std::string& name);
  Declared add(Flag flag);
  std::string program_, summary_;
  std::vector<Flag> options_;
  std::vector<Group> groups_{Group{}};
  std::size_t current_group_ = 0;
  std::vector<std::string> rest_;
};

/// The edit distance between two words: insertions, deletions, substitutions and swaps of two
/// neighbouring characters, each 1 (Damerau-Levenshtein, optimal string alignment).
/// @param a one word. @param b the other. @return the distance.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// The names nearest to a word that is not one of them: those at the smallest edit distance, if
/// that distance is at most 2 (at most 1 for a word of up to 4 characters, where 2 edits make
/// almost anything), in their given order. @param word the unknown word. @param names the known
/// ones. @return the nearest (empty when none is close).
std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& names);

/// A double as the shortest decimal that reads back as the same double, in printf's %g form
/// (0.0001, 1e-05): how printed flags write numbers, so that a printed line parses back exactly.
/// @param value a finite double. @return its text.
std::string shortest_decimal(double value);

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
