#!/usr/bin/env python3
"""Derives Converge's schema data (api/schema/*.json) from upstream's wire-schema facts.

Usage (from the repository root):

    scripts/gen-schema.py /path/to/reference/k8s-wire-schema

Inputs:
  * every <file>.json in the given directory (upstream's protobuf definitions, one file per
    package: {"package", "messages": {Name: {"markers", "fields": [...]}}});
  * api/handwritten/*.json, written by us in the same format, for groups that directory lacks
    (apiextensions.k8s.io, admissionregistration.k8s.io). A field there may also have the type
    "any" (arbitrary JSON, e.g. a CRD's openAPIV3Schema).

Output: api/schema/<file>.json, one compact document per package, committed to the repository and
embedded into the binary at build time (the build never reads the reference directory):

    {"package": "io.k8s.api.apps.v1",
     "types": {
      "Deployment": {"fields": [{"name": "metadata", "number": 1,
                                 "type": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}, ...]},
      ...}}

Per field: name (the JSON name), number (protobuf), type (a scalar — string, bool, int32, int64,
float, double, bytes — "any", or a fully qualified type name such as
io.k8s.api.apps.v1.DeploymentSpec), and only when they apply: repeated, map (type is then the
map's value type; keys are always strings), required, patchStrategy, patchMergeKey, listType,
listMapKeys, mapType, structType, default (a JSON value). Per type: structType when set.

Fields whose type is in no input (a few feature-gated alpha fields) are dropped, with a note.

Facts protobuf does not carry (special JSON forms, Go pointers, inline embedding) are not here:
they live in the hand-maintained api/overrides.json, applied when the registry loads.

Re-run this script whenever the reference or api/handwritten changes, then commit api/schema/.
"""
import glob
import json
import os
import sys

SCALARS = {"string", "bool", "int32", "int64", "float", "double", "bytes", "any",
           "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64"}
# Protobuf scalar types folded onto the few the registry knows (none occur upstream today).
SCALAR_ALIASES = {"uint32": "int64", "uint64": "int64", "sint32": "int32", "sint64": "int64",
                  "fixed32": "int64", "fixed64": "int64", "sfixed32": "int32", "sfixed64": "int64"}


def openapi_package(proto_package):
    """k8s.io.api.apps.v1 -> io.k8s.api.apps.v1 (upstream's OpenAPI model names)."""
    if not proto_package.startswith("k8s.io."):
        raise SystemExit(f"unexpected package {proto_package}")
    return "io.k8s." + proto_package[len("k8s.io."):].replace("_", "-")


def qualify(type_name, package):
    if type_name in SCALARS:
        return SCALAR_ALIASES.get(type_name, type_name)
    if type_name.startswith("."):
        pkg, _, name = type_name[1:].rpartition(".")
        return openapi_package(pkg) + "." + name
    return package + "." + type_name


def marker(markers, *names):
    for n in names:
        if n in markers:
            return markers[n]
    return None


def as_list(v):
    return v if isinstance(v, list) else [v]


def parse_default(v):
    try:
        return json.loads(v)
    except (TypeError, ValueError):
        return None  # e.g. ref(SomeGoConstant): not a literal, not kept


def convert_field(f, package):
    m = f.get("markers", {})
    out = {"name": f["name"], "number": f["number"]}
    if f["type"] == "map":
        if f.get("key") != "string":
            raise SystemExit(f"non-string map key in {package}: {f}")
        out["type"] = qualify(f["value"], package)
        out["map"] = True
    else:
        out["type"] = qualify(f["type"], package)
    if f.get("label") == "repeated":
        out["repeated"] = True
    if marker(m, "required", "k8s:required", "kubebuilder:validation:Required") == "true":
        out["required"] = True
    for key in ("patchStrategy", "patchMergeKey", "mapType", "structType"):
        if key in m:
            out[key] = m[key]
    lt = marker(m, "listType", "k8s:listType")
    if lt:
        out["listType"] = lt
    lmk = marker(m, "listMapKey", "k8s:listMapKey")
    if lmk:
        out["listMapKeys"] = as_list(lmk)
    if "default" in m:
        d = parse_default(m["default"])
        if d is not None:
            out["default"] = d
    return out


def convert(doc):
    package = openapi_package(doc["package"])
    types = {}
    for name in sorted(doc["messages"]):
        msg = doc["messages"][name]
        t = {"fields": [convert_field(f, package) for f in msg["fields"]]}
        st = msg.get("markers", {}).get("structType")
        if st:
            t["structType"] = st
        types[name] = t
    return package, types


def write(path, package, types):
    lines = [json.dumps(name) + ":" + json.dumps(t, separators=(",", ":"))
             for name, t in types.items()]
    with open(path, "w") as f:
        f.write('{"package":' + json.dumps(package) + ',"types":{\n')
        f.write(",\n".join(lines))
        f.write("\n}}\n")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = os.path.join(root, "api", "schema")
    inputs = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
    inputs += sorted(glob.glob(os.path.join(root, "api", "handwritten", "*.json")))
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "*.json")):
        os.remove(old)
    converted = []
    for path in inputs:
        with open(path) as f:
            doc = json.load(f)
        if not doc.get("messages"):
            continue
        package, types = convert(doc)
        converted.append((os.path.basename(path), package, types))
    # Fields whose type lives in a package the inputs lack (alpha APIs such as
    # scheduling.k8s.io/v1alpha3 that a few feature-gated fields refer to) are dropped: the
    # registry only holds types it can resolve.
    known = {p + "." + n for _, p, types in converted for n in types}
    for _, package, types in converted:
        for name, t in types.items():
            kept = []
            for f in t["fields"]:
                if f["type"] in SCALARS or f["type"] in known:
                    kept.append(f)
                else:
                    print(f"gen-schema: dropped {package}.{name}.{f['name']} "
                          f"(unknown type {f['type']})")
            t["fields"] = kept
    for filename, package, types in converted:
        write(os.path.join(out_dir, filename), package, types)
    print(f"gen-schema: wrote {len(converted)} files to {out_dir}")


if __name__ == "__main__":
    main()
