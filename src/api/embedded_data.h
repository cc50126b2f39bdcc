// The files under api/ (schema data, overrides, built-in resources), compiled into the binary.
//
// src/api/CMakeLists.txt generates the definition (build/generated/api_embedded_data.cc) from the
// files at build time, so the server never reads them at run time.
//
// Thread-safety: immutable static data; safe from any thread.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace converge::api {

struct EmbeddedFile {
  std::string_view path;  // relative to api/, e.g. "schema/core_v1.json", "resources.json"
  std::string_view contents;
};

// Every embedded file, sorted by path.
std::span<const EmbeddedFile> EmbeddedApiFiles();

// The contents of one embedded file, or nullopt.
std::optional<std::string_view> FindEmbeddedApiFile(std::string_view path);

}  // namespace converge::api
