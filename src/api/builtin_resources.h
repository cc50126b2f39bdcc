// The built-in resources (api/resources.json, embedded in the binary) as ResourceInfos.
//
// Thread-safety: free functions over immutable data; safe from any thread.
#pragma once

#include <string_view>
#include <vector>

#include "api/resource.h"
#include "api/schema.h"
#include "api/types.h"
#include "util/status.h"

namespace converge::api {

// Parses a resources document (the api/resources.json format), resolving each resource's types
// with `types`. Fails with InvalidArgument on malformed data or a type that `types` lacks.
util::StatusOr<std::vector<ResourceInfo>> ParseResources(std::string_view doc,
                                                         const TypeResolver& types);

// The built-in resources, parsed from the embedded data against BuiltinSchemas() once per process.
// Aborts if the embedded data is broken (a build defect the unit tests catch).
const std::vector<ResourceInfo>& BuiltinResources();

// Registers every built-in resource in `registry` (server start-up). Cheap after the first call in
// a process: the parse is cached.
void LoadBuiltins(ResourceRegistry* registry);

// The root type of a kind the API accepts in request bodies: every built-in resource's kind and
// list kind, the kinds its subresources answer with (Scale, Eviction, Binding, TokenRequest), and
// the meta/v1 option kinds (DeleteOptions, CreateOptions, UpdateOptions, PatchOptions), which
// upstream registers in every group-version. Null when unknown. For protobuf request bodies.
const TypeSchema* BuiltinTypeForKind(const GroupVersionKind& gvk);

}  // namespace converge::api
