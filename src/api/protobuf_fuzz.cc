// libFuzzer target for protobuf request bodies (build with -DCONVERGE_FUZZ=ON and clang):
//   build-fuzz/src/api/protobuf_fuzz -max_total_time=60
// Checks that no input crashes the decoder, and that whatever decodes survives a Go-style
// re-encoding unchanged (decode(encode(decode(x))) == decode(x)).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/builtin_resources.h"
#include "api/protobuf.h"
#include "api/schema_registry.h"

namespace {

void CheckRoundTrip(const boost::json::object& decoded, const converge::api::TypeSchema& type,
                    bool envelope) {
  using namespace converge::api;
  for (bool write_empty : {false, true}) {
    ProtobufEncodeOptions opts{.write_empty_fields = write_empty};
    auto bytes = envelope ? EncodeProtobufObject(decoded, type, opts)
                          : EncodeProtobufMessage(decoded, type, opts);
    if (!bytes.ok()) std::abort();  // decoded JSON must always be encodable
    auto again = envelope ? DecodeProtobufObject(*bytes) : DecodeProtobufMessage(*bytes, type);
    if (!again.ok() || *again != decoded) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace converge::api;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // A whole body (envelope + the kind it names).
  if (auto obj = DecodeProtobufObject(input); obj.ok()) {
    auto env = ParseProtobufEnvelope(input);
    GroupVersion gv = GroupVersion::Parse(env->api_version);
    CheckRoundTrip(*obj, *BuiltinTypeForKind({gv.group, gv.version, env->kind}), true);
  }
  // The bare input as a Pod and as a Deployment: the deepest built-in shapes.
  for (const char* name : {"io.k8s.api.core.v1.Pod", "io.k8s.api.apps.v1.Deployment"}) {
    const TypeSchema* t = BuiltinSchemas().FindType(name);
    if (auto obj = DecodeProtobufMessage(input, *t); obj.ok()) CheckRoundTrip(*obj, *t, false);
  }
  return 0;
}
