// Helpers shared by the store's tests: temporary directories and small-store options.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "store/embedded_store.h"

namespace converge::store {

// A fresh directory removed (with its contents) on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "converge-store-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The bytes of the file at `path` from byte `from` on ("" if it cannot be read), read in large
// blocks: a log segment is megabytes, and a byte-wise istreambuf_iterator took seconds per file in
// the unoptimised sanitizer builds.
inline std::string ReadFileBytes(const std::string& path, uint64_t from = 0) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff end = in.tellg();
  const auto start = static_cast<std::streamoff>(from);
  if (end <= start) return "";
  std::string bytes(static_cast<size_t>(end - start), '\0');
  in.seekg(start);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

inline EmbeddedStoreOptions TestStoreOptions(const std::string& dir) {
  EmbeddedStoreOptions options;
  options.dir = dir;
  options.map_size = size_t{1} << 30;
  return options;
}

}  // namespace converge::store

namespace converge::store {

// The value the crash test writes under `key`: its length (100..4000 bytes) and bytes follow
// from the key, so a reader can check what it reads back.
inline std::string CrashTestValue(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  std::string value(100 + h % 3900, '\0');
  for (char& c : value) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>('a' + (h >> 59));
  }
  return key + ":" + value;
}

}  // namespace converge::store
