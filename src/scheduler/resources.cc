#include "scheduler/resources.h"

#include <algorithm>

#include "api/object.h"
#include "api/quantity.h"

namespace converge::scheduler {

namespace json = boost::json;

namespace {

template <typename Vector>
auto FindScalar(Vector& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const auto& e, std::string_view n) { return e.first < n; });
}

int64_t QuantityValue(api::View v, bool milli) {
  std::optional<api::Quantity> q = api::Quantity::FromJson(v);
  if (!q) return 0;
  return milli ? q->MilliValue() : q->Value();
}

// Adds one container's requests to `out`; with defaults, a missing cpu/memory request counts as
// the default request.
Resource ContainerRequests(api::ObjectView container, bool non_missing_defaults) {
  api::ObjectView requests = api::FindObject(container, {"resources", "requests"});
  Resource r = ResourceListToResource(requests);
  if (non_missing_defaults) {
    if (!requests.contains("cpu")) r.milli_cpu = kDefaultMilliCpuRequest;
    if (!requests.contains("memory")) r.memory = kDefaultMemoryRequest;
  }
  return r;
}

}  // namespace

int64_t Resource::Scalar(std::string_view name) const {
  auto it = FindScalar(scalar, name);
  return it != scalar.end() && it->first == name ? it->second : 0;
}

void Resource::AddScalar(std::string_view name, int64_t v) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second += v;
  } else {
    scalar.emplace(it, std::string(name), v);
  }
}

void Resource::SetMaxScalar(std::string_view name, int64_t v) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second = std::max(it->second, v);
  } else {
    scalar.emplace(it, std::string(name), v);
  }
}

void Resource::Add(const Resource& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pod_number += o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar) AddScalar(name, v);
}

void Resource::Sub(const Resource& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pod_number -= o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar) AddScalar(name, -v);
}

void Resource::SetMax(const Resource& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, o.allowed_pod_number);
  for (const auto& [name, v] : o.scalar) SetMaxScalar(name, v);
}

bool Resource::IsZeroRequest() const {
  if (milli_cpu != 0 || memory != 0 || ephemeral_storage != 0) return false;
  return std::all_of(scalar.begin(), scalar.end(), [](const auto& e) { return e.second == 0; });
}

bool IsScalarResourceName(std::string_view name) {
  return name.find('/') != std::string_view::npos || name.starts_with("hugepages-") ||
         name.starts_with("attachable-volumes-");
}

Resource ResourceListToResource(api::ObjectView list) {
  Resource r;
  for (api::Member m : list) {
    const std::string_view name = m.key();
    const api::View value = m.value();
    if (name == "cpu") {
      r.milli_cpu = QuantityValue(value, /*milli=*/true);
    } else if (name == "memory") {
      r.memory = QuantityValue(value, false);
    } else if (name == "ephemeral-storage") {
      r.ephemeral_storage = QuantityValue(value, false);
    } else if (name == "pods") {
      r.allowed_pod_number = QuantityValue(value, false);
    } else if (IsScalarResourceName(name)) {
      r.AddScalar(name, QuantityValue(value, false));
    }
  }
  return r;
}

Resource PodRequests(api::ObjectView pod_spec, bool non_missing_defaults) {
  Resource reqs;
  if (api::ArrayView containers = api::FindArray(pod_spec, {"containers"})) {
    for (api::View c : *containers) {
      if (c.is_object()) reqs.Add(ContainerRequests(c.as_object(), non_missing_defaults));
    }
  }
  Resource restartable_init;  // sidecars started so far
  Resource init_max;
  if (api::ArrayView inits = api::FindArray(pod_spec, {"initContainers"})) {
    for (api::View c : *inits) {
      if (!c.is_object()) continue;
      Resource container = ContainerRequests(c.as_object(), non_missing_defaults);
      if (api::FindString(c.as_object(), {"restartPolicy"}) == "Always") {
        // A sidecar keeps running next to the regular containers and later init containers.
        reqs.Add(container);
        restartable_init.Add(container);
        container = restartable_init;
      } else {
        container.Add(restartable_init);
      }
      init_max.SetMax(container);
    }
  }
  reqs.SetMax(init_max);
  if (api::ObjectView overhead = api::FindObject(pod_spec, {"overhead"})) {
    Resource o = ResourceListToResource(overhead);
    o.allowed_pod_number = 0;
    reqs.Add(o);
  }
  reqs.allowed_pod_number = 0;
  return reqs;
}

}  // namespace converge::scheduler
