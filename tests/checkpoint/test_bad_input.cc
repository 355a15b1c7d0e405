// What can be wrong with a checkpoint, and the one-line error that says so: gaps and overlaps
// (refused by publish, and by the reader in an edited manifest), intervals sharing bytes, a truncated or missing data
// file, a flipped byte, another format version, malformed JSON, a missing or mistyped field.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/fixtures.h"
#include "core/atomic_file.h"
#include "core/check.h"

using namespace zt;
using namespace zt::checkpoint;
using namespace zt::test::ckpt;

namespace {

// The message of the zt::Error fn throws ("" if none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}

// A published checkpoint of two parameters, three states, three ranks; returns its directory.
std::string good_checkpoint(const TempDir& dir, Values* values = nullptr) {
  const Manifest h = synthetic_header({1000, 3000}, {"master", "adam.m", "adam.v"}, 8);
  const Values v = make_values(h, 77);
  if (values) *values = v;
  return save(dir.path(), 8, h, v, deal(h, 3, 78));
}

nlohmann::json load_manifest(const std::string& ckpt) {
  return nlohmann::json::parse(read_file(ckpt + "/" + kManifestName));
}
void store_manifest(const std::string& ckpt, const nlohmann::json& j) {
  write_file_atomic(ckpt + "/" + kManifestName, j.dump());
}

}  // namespace

TEST_CASE("checkpoint: publish refuses a gap or an overlap and publishes nothing", "[ch14]") {
  const Manifest h = synthetic_header({100, 50}, {"master", "adam.m"}, 1);
  const Values v = make_values(h, 5);
  SECTION("gap") {
    TempDir dir("gap");
    auto plan = deal(h, 2, 6);
    for (auto& pieces : plan)  // p1 of adam.m is dealt again below, without [20, 30)
      pieces.erase(std::remove_if(pieces.begin(), pieces.end(),
                                  [](const Piece& p) { return p.state == "adam.m" && p.param == 1; }),
                   pieces.end());
    plan[1].push_back({"adam.m", 1, 0, 20});
    plan[0].push_back({"adam.m", 1, 30, 20});
    const std::string what = error_of([&] { save(dir.path(), 1, h, v, plan); });
    CHECK_THAT(what, Catch::Contains("adam.m of p1: elements [20, 30) are not saved"));
    CHECK(what.find(step_dir(dir.path(), 1) + ".tmp/manifest.json") != std::string::npos);
    CHECK(one_line(what));
    CHECK_FALSE(fs::exists(step_dir(dir.path(), 1)));
  }
  SECTION("overlap") {
    TempDir dir("overlap");
    auto plan = deal(h, 3, 7);
    Piece first;  // the piece holding element 0 of p0's master, given to rank 2 a second time
    for (const auto& pieces : plan)
      for (const auto& p : pieces)
        if (p.state == "master" && p.param == 0 && p.offset == 0) first = p;
    plan[2].push_back(first);
    const std::string what = error_of([&] { save(dir.path(), 1, h, v, plan); });
    CHECK_THAT(what,
               Catch::Contains("master of p0: elements [0, " + std::to_string(first.length) + ") are saved twice"));
    CHECK(one_line(what));
    CHECK_FALSE(fs::exists(step_dir(dir.path(), 1)));
  }
  SECTION("a state the header does not list, a rank that never finished") {
    TempDir dir("unlisted");
    auto plan = deal(h, 2, 8);
    plan[1].push_back({"adam.v", 0, 0, 1});
    Values w = v;
    w.states.push_back("adam.v");
    w.dense.push_back(v.dense[0]);
    CHECK_THAT(error_of([&] { save(dir.path(), 1, h, w, plan); }),
               Catch::Contains("\"adam.v\", which is not in states"));
    const std::string temp = begin_save(dir.path(), 2);
    RankFileWriter(temp, 0).finish();
    CHECK_THAT(error_of([&] { publish(dir.path(), 2, h, 2); }),
               Catch::Contains("rank-00001.json: missing: rank 1 has not finished"));
  }
}

TEST_CASE("checkpoint: the reader refuses a gap or an overlap in the manifest", "[ch14]") {
  TempDir dir("reader_cover");
  const std::string ckpt = good_checkpoint(dir);
  auto j = load_manifest(ckpt);
  const auto original = j;
  // drop the interval holding element 0 of p1 in adam.v
  auto& ivs = j["intervals"];
  for (std::size_t i = 0; i < ivs.size(); ++i)
    if (ivs[i]["state"] == "adam.v" && ivs[i]["param"] == 1 && ivs[i]["offset"] == 0) {
      const int64_t end = ivs[i]["length"].get<int64_t>();
      ivs.erase(i);
      store_manifest(ckpt, j);
      const std::string what = error_of([&] { Reader r(ckpt); });
      CHECK_THAT(what, Catch::Contains(ckpt + "/manifest.json: adam.v of p1: elements [0, " + std::to_string(end) +
                                       ") are not saved"));
      CHECK(one_line(what));
      break;
    }
  j = original;
  j["intervals"].push_back(j["intervals"][0]);  // the same elements twice
  store_manifest(ckpt, j);
  CHECK_THAT(error_of([&] { Reader r(ckpt); }), Catch::Contains("are saved twice"));
  // two intervals stored at the same bytes: the elements are all there, the bytes are not
  j = original;
  auto& all = j["intervals"];
  REQUIRE(all[0]["file"] == all[1]["file"]);
  REQUIRE(all[0]["byte_offset"] < all[1]["byte_offset"]);
  all[1]["byte_offset"] = all[0]["byte_offset"];
  store_manifest(ckpt, j);
  const std::string what = error_of([&] { Reader r(ckpt); });
  CHECK_THAT(what, Catch::Contains(ckpt + "/manifest.json: intervals[0] and intervals[1] share bytes"));
  CHECK(one_line(what));
}

TEST_CASE("checkpoint: a truncated, missing or corrupted data file is named", "[ch14]") {
  TempDir dir("files");
  Values v;
  const std::string ckpt = good_checkpoint(dir, &v);
  const std::string file = ckpt + "/rank-00001.bin";
  const auto size = fs::file_size(file);
  SECTION("truncated") {
    fs::resize_file(file, size - 4);
    const std::string what = error_of([&] { Reader r(ckpt); });
    CHECK(what == file + ": " + std::to_string(size - 4) + " bytes, the manifest says " + std::to_string(size) +
                      " (truncated?)");
  }
  SECTION("missing") {
    fs::remove(file);
    CHECK(error_of([&] { Reader r(ckpt); }) == file + ": missing (the manifest lists it)");
  }
  SECTION("one flipped byte") {
    Reader clean(ckpt);
    // the interval of rank 1 that holds its byte 100
    const Interval* hit = nullptr;
    for (const auto& iv : clean.manifest().intervals)
      if (iv.file == 1 && iv.byte_offset <= 100 && 100 < iv.byte_offset + 4 * static_cast<uint64_t>(iv.length))
        hit = &iv;
    REQUIRE(hit != nullptr);
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(100);
      const char c = static_cast<char>(f.get());
      f.seekp(100);
      f.put(static_cast<char>(c ^ 0x10));
    }
    Reader r(ckpt);  // sizes are right: opening succeeds
    std::vector<float> out(static_cast<std::size_t>(hit->length));
    const std::string what = error_of([&] { r.read(hit->state, hit->param, hit->offset, 1, out.data()); });
    const std::string bytes =
        std::to_string(hit->byte_offset) + ".." + std::to_string(hit->byte_offset + 4 * hit->length);
    CHECK_THAT(what, Catch::StartsWith(file + ": bytes " + bytes + " (" + describe(r.manifest(), *hit) +
                                       ") fail their checksum"));
    CHECK(one_line(what));
    CHECK_THAT(error_of([&] { r.verify_files(); }), Catch::StartsWith(file + ": the whole file fails its checksum"));
    // every other interval still reads and verifies
    for (const auto& iv : r.manifest().intervals)
      if (&iv - r.manifest().intervals.data() != hit - clean.manifest().intervals.data()) {
        std::vector<float> part(static_cast<std::size_t>(iv.length));
        r.read(iv.state, iv.param, iv.offset, iv.length, part.data());
        CHECK(std::memcmp(part.data(), v.at(iv.state, iv.param) + iv.offset, part.size() * 4) == 0);
      }
  }
}

TEST_CASE("checkpoint: manifest errors name the manifest and the field", "[ch14]") {
  TempDir dir("manifest");
  const std::string ckpt = good_checkpoint(dir);
  const std::string path = ckpt + "/manifest.json";
  const auto original = load_manifest(ckpt);
  const auto broken = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto j = original;
    edit(j);
    store_manifest(ckpt, j);
    const std::string what = error_of([&] { Reader r(ckpt); });
    CHECK(one_line(what));
    return what;
  };
  CHECK(broken([](auto& j) { j["format_version"] = 7; }) == path + ": format version 7, this program reads version 1");
  // the version is checked before anything else is looked at
  CHECK(broken([](auto& j) {
          j["format_version"] = 2;
          j.erase("params");
        }) == path + ": format version 2, this program reads version 1");
  CHECK(broken([](auto& j) { j.erase("format_version"); }) == path + ": field format_version is missing");
  CHECK(broken([](auto& j) { j["intervals"][3].erase("length"); }) == path + ": field intervals[3].length is missing");
  CHECK(broken([](auto& j) { j["intervals"][2]["length"] = "12"; }) ==
        path + ": field intervals[2].length should be an integer, not string");
  CHECK(broken([](auto& j) { j["files"][0]["bytes"] = 1.5; }) ==
        path + ": field files[0].bytes should be an integer, not number");
  CHECK(broken([](auto& j) { j["files"][1]["name"] = "../x.bin"; }) ==
        path + ": field files[1].name \"../x.bin\" is not a plain file name");
  CHECK_THAT(broken([](auto& j) { j["intervals"][0]["param"] = 9; }), Catch::Contains("names parameter 9 of 2"));
  CHECK_THAT(broken([](auto& j) { j["intervals"][0]["byte_offset"] = 1u << 30; }), Catch::Contains("lies beyond"));
  CHECK_THAT(broken([](auto& j) { j["params"][0]["numel"] = 999; }),
             Catch::Contains("field params[0].numel is 999, the shape has 1000 elements"));
  write_file_atomic(path, std::string("{\"format_version\": 1, \"model\": "));
  const std::string what = error_of([&] { Reader r(ckpt); });
  CHECK_THAT(what, Catch::StartsWith(path + ": not valid JSON ("));
  CHECK(one_line(what));
  fs::remove(path);
  CHECK_THAT(error_of([&] { Reader r(ckpt); }), Catch::Contains(path));
}

TEST_CASE("checkpoint: reads outside a parameter or of an unsaved state are refused", "[ch14]") {
  TempDir dir("ranges");
  const std::string ckpt = good_checkpoint(dir);
  Reader r(ckpt);
  float x[2];
  CHECK(error_of([&] { r.read("sgd.momentum", 0, 0, 1, x); }) ==
        ckpt + ": no state \"sgd.momentum\" in this checkpoint (it has master, adam.m, adam.v)");
  CHECK(error_of([&] { r.read("master", 0, 999, 2, x); }) ==
        ckpt + ": master of p0: elements [999, 1001) are outside its 1000");
  CHECK(error_of([&] { r.read("master", 2, 0, 1, x); }) == ckpt + ": no parameter 2 (there are 2)");
}

TEST_CASE("checkpoint: a misspelt crash point is an error, not a silent no-op", "[ch14]") {
  TempDir dir("crash_env");
  const std::string temp = begin_save(dir.path(), 1);
  ::setenv("ZT_CHECKPOINT_CRASH_AT", "data-halfway", 1);
  const std::string what = error_of([&] { RankFileWriter w(temp, 0); });
  ::unsetenv("ZT_CHECKPOINT_CRASH_AT");
  CHECK_THAT(what, Catch::StartsWith("ZT_CHECKPOINT_CRASH_AT=data-halfway is not a crash point"));
}

TEST_CASE("checkpoint: a full disk is an error naming the file and the reason", "[ch14]") {
  // rank 0's data file is made a link to /dev/full, where every write fails with ENOSPC
  if (!fs::exists("/dev/full")) {
    WARN("no /dev/full: skipped");
    return;
  }
  TempDir dir("full");
  const std::string temp = begin_save(dir.path(), 1);
  fs::create_symlink("/dev/full", fs::path(temp) / "rank-00000.bin");
  RankFileWriter w(temp, 0);
  const std::vector<float> values(static_cast<std::size_t>(kMaxIntervalElements), 1.0f);
  const std::string what = error_of([&] { w.add("master", 0, 0, values.data(), kMaxIntervalElements); });
  CHECK(what == "cannot write " + temp + "/rank-00000.bin: No space left on device");
  fs::create_symlink("/dev/full", fs::path(temp) / "rank-00001.bin");
  RankFileWriter small(temp, 1);
  small.add("master", 0, 0, values.data(), 10);  // buffered: the write, and its error, come at finish()
  CHECK(error_of([&] { small.finish(); }) == "cannot write " + temp + "/rank-00001.bin: No space left on device");
}
