// zero-ckpt — look into, consolidate and export the sharded checkpoints zero-train writes:
//
//   zero-ckpt inspect DIR [--verify] [--json]
//   zero-ckpt consolidate DIR OUT [--state master]
//   zero-ckpt export DIR OUT [--format safetensors]
//
// DIR is a checkpoint directory or a save directory (then its newest complete checkpoint, as
// --resume resolves it). Exit status: 0 on success, 2 for a malformed command line (unknown
// subcommand or flag, missing arguments), 1 when the work fails (no checkpoint, a corrupt file,
// an existing OUT, an unknown state); either way one line on stderr and nothing half-written.
// This file is only the command line; the subcommands are commands.h, the format checkpoint/.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/zero-ckpt/commands.h"
#include "core/check.h"
#include "core/cli.h"
#include "core/output_place.h"

namespace {

struct Command {
  std::string name;                // inspect | consolidate | export
  std::vector<std::string> paths;  // DIR [OUT]
  bool verify = false, json = false;
  std::string state = "master", format = "safetensors";
};

// The flags of one subcommand, bound to c. @return the parser.
zt::ArgParser parser_for(const std::string& name, Command& c) {
  if (name == "inspect") {
    zt::ArgParser p("zero-ckpt inspect DIR",
                    "Print a checkpoint's format version, step, model, sharding, states and files.");
    p.add_flag("verify", &c.verify, "also check every data file's CRC-32C");
    p.add_flag("json", &c.json, "print the summary as JSON");
    return p;
  }
  if (name == "consolidate") {
    zt::ArgParser p("zero-ckpt consolidate DIR OUT",
                    "Write one state as raw little-endian FP32, parameters end to end in canonical order "
                    "(the format of zero-train --dump-params).");
    p.add_string("state", &c.state, "the state to write: master, adam.m, adam.v or sgd.momentum");
    return p;
  }
  zt::ArgParser p("zero-ckpt export DIR OUT",
                  "Export the master weights as a Hugging Face GPT-2 directory: OUT/model.safetensors and "
                  "OUT/config.json.");
  p.add_choice("format", &c.format, {"safetensors"}, "the output format");
  return p;
}

const char* kSubcommands[] = {"inspect", "consolidate", "export"};

const char kIntro[] =
    "Inspect, consolidate or export a checkpoint of zero-train. DIR is a checkpoint directory, or a\n"
    "save directory (its newest complete checkpoint). Exit status: 2 for a malformed command line,\n"
    "1 when the work fails; nothing is left half-written.\n";

std::string overview() {
  std::string text = std::string("usage: zero-ckpt SUBCOMMAND DIR [OUT] [flags]\n") + kIntro;
  for (const char* name : kSubcommands) {
    Command scratch;
    text += '\n';
    text += parser_for(name, scratch).usage();
  }
  return text;
}

// The overview as Markdown (docs/cli.md): the intro, then each subcommand's flags as its parser
// prints them for --help-markdown.
void print_overview_markdown(char* program) {
  std::printf("Usage: `zero-ckpt SUBCOMMAND DIR [OUT] [flags]`. %s", kIntro);
  for (const char* name : kSubcommands) {
    Command scratch;
    char flag[] = "--help-markdown";
    char* args[] = {program, flag};
    std::printf("\n");
    std::fflush(stdout);
    parser_for(name, scratch).parse(2, args);
  }
}

// Parse argv into c. @return false when help was printed.
bool parse(int argc, char** argv, Command& c) {
  ZT_CHECK(argc >= 2, "give a subcommand: inspect, consolidate or export (see --help)");
  c.name = argv[1];
  if (c.name == "--help" || c.name == "-h") {
    std::fputs(overview().c_str(), stdout);
    return false;
  }
  if (c.name == "--help-markdown") {
    print_overview_markdown(argv[0]);
    return false;
  }
  bool known = false;
  for (const char* name : kSubcommands) known = known || c.name == name;
  ZT_CHECK(known, "unknown subcommand '", c.name, "' (inspect, consolidate or export; see --help)");
  // DIR [OUT] come first, the flags after them
  int i = 2;
  for (; i < argc && argv[i][0] != '-'; ++i) c.paths.push_back(argv[i]);
  std::vector<char*> flags = {argv[0]};
  for (; i < argc; ++i) flags.push_back(argv[i]);
  zt::ArgParser p = parser_for(c.name, c);
  if (!p.parse(static_cast<int>(flags.size()), flags.data())) return false;
  ZT_CHECK(p.rest().empty(), "zero-ckpt ", c.name, " takes nothing after --");
  const std::size_t wanted = c.name == "inspect" ? 1 : 2;
  ZT_CHECK(c.paths.size() == wanted, "zero-ckpt ", c.name, " takes ", wanted == 1 ? "DIR" : "DIR OUT", ", then flags (",
           c.paths.size(), " paths given; see --help)");
  for (const auto& path : c.paths) ZT_CHECK(!path.empty(), "an empty path");
  return true;
}

int report(const std::exception& e, int status) {
  std::fflush(stdout);
  std::fprintf(stderr, "zero-ckpt: error: %s\n", e.what());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Command c;
  try {
    if (!parse(argc, argv, c)) return 0;
  } catch (const std::exception& e) {
    return report(e, 2);
  }
  try {
    // OUT's directory is created, or refused, before any work (core/output_place.h); export's OUT
    // itself must be new (it appears whole, by one rename)
    if (c.name == "consolidate") zt::prepare_output_place({"OUT", c.paths[1], zt::PlaceKind::file});
    const std::string out_parent = c.paths.size() > 1 ? std::filesystem::path(c.paths[1]).parent_path().string() : "";
    if (c.name == "export" && !out_parent.empty())
      zt::prepare_output_place({"OUT", out_parent, zt::PlaceKind::directory});
    if (c.name == "inspect")
      zt::ckpt_tool::inspect(c.paths[0], c.verify, c.json);
    else if (c.name == "consolidate")
      zt::ckpt_tool::consolidate(c.paths[0], c.paths[1], c.state);
    else
      zt::ckpt_tool::export_safetensors(c.paths[0], c.paths[1]);
  } catch (const std::exception& e) {
    return report(e, 1);
  }
  return 0;
}
