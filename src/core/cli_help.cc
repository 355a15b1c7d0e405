// core/cli_help.cc — what the parser of cli.h prints about its flags: --help (the flags by group,
// every line at most kHelpColumns wide, a description wrapped under a hanging indent),
// --help-markdown (a table per group, for docs/cli.md) and the suggestion an unknown flag's error
// carries (the declared name nearest to it by edit distance, or the one it begins).
#include <algorithm>
#include <string>
#include <vector>

#include "core/cli.h"

namespace zt {

namespace {

constexpr std::size_t kDescriptionColumn = 31;  // where --help's descriptions start

// `text` broken at spaces into lines at most kHelpColumns wide: the first continues a line that
// already holds `column` columns, the others start after `indent` spaces. A word that begins with
// "--" stays on the line of the word before it, so that a continued line does not read like a
// flag's own line ("  --name", what tests/setup/check_help_defaults.sh and test_output_places.cc
// look for); only a run of such words wider than a line breaks between them. A word wider than a
// line overflows it on a line of its own.
std::string wrapped(const std::string& text, std::size_t column, std::size_t indent) {
  std::vector<std::vector<std::string>> units;  // the words kept on one line: a word and its "--" words
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (units.empty() || word.rfind("--", 0) != 0) units.emplace_back();
    units.back().push_back(std::move(word));
  }
  std::string out;
  std::size_t width = column;
  bool line_started = false;  // a word is on the current line already
  const auto place = [&](const std::string& words) {
    if (line_started && width + 1 + words.size() > kHelpColumns) {
      out += '\n';
      out.append(indent, ' ');
      width = indent;
      line_started = false;
    }
    if (line_started) {
      out += ' ';
      ++width;
    }
    out += words;
    width += words.size();
    line_started = true;
  };
  for (const auto& unit : units) {
    std::string joined;
    for (const auto& w : unit) joined += (joined.empty() ? "" : " ") + w;
    if (indent + joined.size() <= kHelpColumns) {
      place(joined);
      continue;
    }
    for (const auto& w : unit) place(w);  // wider than any line: it breaks between its words
  }
  return out;
}

// One flag's entry in --help: "  --name KIND", the description from column 32 (on the next line
// when the name is wider), ended by its default, wrapped under the description's column.
std::string flag_entry(const ArgParser::Flag& o) {
  std::string left = "  --" + o.name + (o.kind.empty() ? "" : " " + o.kind);
  left = left.size() < kDescriptionColumn ? left + std::string(kDescriptionColumn - left.size(), ' ')
                                          : left + "\n" + std::string(kDescriptionColumn, ' ');
  return left + wrapped(o.help + " (default: " + o.default_text + ")", kDescriptionColumn, kDescriptionColumn) + "\n";
}

// Text for one cell of a Markdown table: the characters Markdown would read as markup (a cell's
// end, emphasis, an HTML tag such as step-<N>, an escape) are escaped; line breaks become spaces.
std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\n') {
      out += ' ';
      continue;
    }
    if (ch == '|' || ch == '*' || ch == '<' || ch == '\\' || ch == '`' || ch == '[') out += '\\';
    out += ch;
  }
  return out;
}

// One flag's row of the Markdown table: name, value, default, description.
std::string markdown_row(const ArgParser::Flag& o) {
  // a kind such as fp32|fp16 is code: its bars escaped, so they do not end the cell
  std::string kind;
  for (char ch : o.kind) kind += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return "| `--" + o.name + "` | " + (kind.empty() ? "(switch)" : "`" + kind + "`") + " | " +
         markdown_cell(o.default_text) + " | " + markdown_cell(o.help) + " |\n";
}

// The groups that hold a flag, in print order; the untitled one too when no group holds any, so
// that --help still has a heading for itself.
std::vector<std::size_t> printed_groups(const std::vector<ArgParser::Group>& groups,
                                        const std::vector<ArgParser::Flag>& flags) {
  std::vector<std::size_t> out;
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (std::any_of(flags.begin(), flags.end(), [g](const ArgParser::Flag& o) { return o.group == g; }))
      out.push_back(g);
  if (out.empty()) out.push_back(0);
  return out;
}

}  // namespace

std::string ArgParser::usage() const {
  std::string text = "usage: " + program_ + " [flags]\n";
  for (std::size_t at = 0;;) {  // the summary's own line breaks kept, each line wrapped
    const std::size_t end = summary_.find('\n', at);
    text += wrapped(summary_.substr(at, end == std::string::npos ? std::string::npos : end - at), 0, 0);
    if (end == std::string::npos) break;
    text += "\n";
    at = end + 1;
  }
  text += "\n";
  for (std::size_t g : printed_groups(groups_, options_)) {
    const Group& group = groups_[g];
    text += "\n" + (group.title.empty() ? std::string("flags") : group.title) + ":\n";
    if (!group.example.empty()) text += "  example: " + wrapped(group.example, 11, 4) + "\n";
    for (const auto& o : options_)
      if (o.group == g) text += flag_entry(o);
  }
  text += "  --help                       print this text and exit (--help-markdown: as Markdown)\n";
  return text;
}

std::string ArgParser::markdown_usage() const {
  std::string text = "Usage: `" + program_ + " [flags]`. " + markdown_cell(summary_) + "\n";
  const std::vector<std::size_t> printed = printed_groups(groups_, options_);
  for (std::size_t g : printed) {
    const Group& group = groups_[g];
    text += "\n";
    if (!group.title.empty()) text += "### " + group.title + "\n\n";
    if (!group.example.empty()) text += "Example: `" + group.example + "`\n\n";
    text += "| flag | value | default | what it does |\n|---|---|---|---|\n";
    for (const auto& o : options_)
      if (o.group == g) text += markdown_row(o);
  }
  text += "| `--help` | (switch) | | print the flags and exit (`--help-markdown`: as this Markdown table) |\n";
  return text;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // d[i][j]: the distance between a's first i characters and b's first j
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])  // two neighbours swapped
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& names) {
  const std::size_t limit = word.size() <= 4 ? 1 : 2;
  std::size_t best = limit + 1;
  std::vector<std::string> out;
  for (const auto& name : names) {
    // lengths further apart than the limit are further apart in edits too (and a long word
    // costs no table)
    if (name == word || std::max(name.size(), word.size()) - std::min(name.size(), word.size()) > limit) continue;
    const std::size_t d = edit_distance(word, name);
    if (d > limit) continue;
    if (d < best) {
      best = d;
      out.clear();
    }
    if (d == best) out.push_back(name);
  }
  return out;
}

std::string ArgParser::suggestion(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& o : options_) names.push_back(o.name);
  names.insert(names.end(), {"help", "help-markdown"});
  std::vector<std::string> near = closest_names(name, names);
  if (near.empty() && name.size() >= 3) {  // a beginning: --warmup for --warmup-steps
    for (const auto& n : names)
      if (n.size() > name.size() && n.compare(0, name.size(), name) == 0) near.push_back(n);
    if (near.size() > 1) near.clear();
  }
  if (near.size() > 3) return "";  // so many equally near names that none is meant
  std::string text;
  for (std::size_t k = 0; k < near.size(); ++k)
    text += (k == 0 ? "" : k + 1 == near.size() ? " or " : ", ") + std::string("--") + near[k];
  return text;
}

}  // namespace zt
