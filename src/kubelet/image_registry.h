// The simulated image registry: which image references exist, what pulling them costs, and the
// identities (digests, sizes) a real registry would report.
//
// References are parsed and normalized as containerd does (docker/distribution's reference
// grammar): "nginx:1.27" is docker.io/library/nginx:1.27, a name without tag or digest gets
// ":latest", upper case in the repository is invalid ("repository name must be lowercase").
//
// Every well-formed reference exists, except the documented missing set:
//   - the normalized reference contains "doesnotexist" (any case), e.g. nginx:doesnotexist;
//   - the registry host is "missing.example" or ends in ".invalid" (the host does not resolve).
// Pulling a missing image fails with containerd's wording (NotFound, or a DNS failure for
// unknown hosts), which the kubelet reports as ErrImagePull and then ImagePullBackOff.
//
// Digests and sizes are deterministic functions of the normalized reference, so two pulls of one
// image on two nodes report the same imageID, as they would against a real registry.
//
// Thread-safety: pure functions over values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace converge::kubelet {

struct ImageReference {
  std::string domain;      // "docker.io"
  std::string path;        // "library/nginx"
  std::string tag;         // "1.27" ("latest" when neither tag nor digest was given)
  std::string digest;      // "sha256:…" when given
  std::string normalized;  // "docker.io/library/nginx:1.27" (or "…@sha256:…")

  std::string Repository() const { return domain + "/" + path; }
};

// Parses and normalizes `image`. InvalidArgument with upstream's wording ("invalid reference
// format", "invalid reference format: repository name must be lowercase") when malformed.
util::StatusOr<ImageReference> ParseImageReference(std::string_view image);

// The message of the kubelet's InvalidImageName waiting state and InspectFailed event.
std::string InvalidImageNameMessage(std::string_view image, const util::Status& parse_error);

// Whether the registry has `ref`; when not, `error` (if non-null) gets the pull error text as
// containerd words it ("rpc error: code = NotFound desc = failed to pull and unpack image ...").
bool ImageExists(const ImageReference& ref, std::string* error = nullptr);

// "docker.io/library/nginx@sha256:<64 hex>": what a container status reports as imageID.
std::string ImageId(const ImageReference& ref);
// The image size a pull reports, in bytes (5 MB to 200 MB, fixed per reference).
int64_t ImageSizeBytes(const ImageReference& ref);

// 64 lower-case hex digits derived from `seed` (for container IDs, digests, machine IDs).
std::string HexId(std::string_view seed, size_t digits = 64);

// Go's time.Duration.String() of d truncated to milliseconds: "0s", "250ms", "1.5s", "2m3.004s",
// as the kubelet prints pull durations.
std::string GoDurationMillis(std::chrono::nanoseconds d);

}  // namespace converge::kubelet
