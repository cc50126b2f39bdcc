#include "controllers/deployment/rolling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace converge::controllers::deployment {

namespace json = boost::json;

util::StatusOr<int64_t> ScaledValueFromIntOrPercent(const json::value& v, int64_t total,
                                                    bool round_up) {
  if (v.is_null()) return int64_t{0};
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64()) return static_cast<int64_t>(v.as_uint64());
  if (v.is_string()) {
    std::string_view s = v.as_string();
    if (s.size() >= 2 && s.back() == '%') {
      int64_t pct = 0;
      bool digits = true;
      for (char c : s.substr(0, s.size() - 1)) {
        if (c < '0' || c > '9') digits = false;
        pct = pct * 10 + (c - '0');
      }
      if (digits) {
        // Integer arithmetic: exactly upstream's ceil/floor of value · total / 100.
        int64_t product = pct * total;
        return round_up ? (product + 99) / 100 : product / 100;
      }
    }
    return util::InvalidArgument(
        "invalid value for IntOrString: invalid type: string is not a percentage");
  }
  return util::InvalidArgument("invalid value for IntOrString: " + json::serialize(v));
}

util::StatusOr<Fenceposts> ResolveFenceposts(const json::value& max_surge,
                                             const json::value& max_unavailable, int64_t desired) {
  CONVERGE_ASSIGN_OR_RETURN(int64_t surge, ScaledValueFromIntOrPercent(max_surge, desired, true));
  CONVERGE_ASSIGN_OR_RETURN(int64_t unavailable,
                            ScaledValueFromIntOrPercent(max_unavailable, desired, false));
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return Fenceposts{surge, unavailable};
}

int64_t SurgeCount(const RsCounts& rs) {
  return std::max(rs.spec, rs.status_replicas);
}
int64_t AvailableCount(const RsCounts& rs) {
  return std::min(rs.spec, rs.available);
}

int64_t NewReplicaSetReplicas(int64_t replicas, int64_t max_surge, const std::vector<RsCounts>& all,
                              const RsCounts& new_rs) {
  int64_t current = 0;
  for (const RsCounts& rs : all) current += SurgeCount(rs);
  int64_t max_total = replicas + max_surge;
  if (current >= max_total) return new_rs.spec;
  int64_t up = std::min(max_total - current, replicas - new_rs.spec);
  return new_rs.spec + std::max<int64_t>(up, 0);
}

int64_t MaxScaledDown(int64_t replicas, int64_t max_unavailable, const std::vector<RsCounts>& all,
                      const RsCounts& new_rs) {
  int64_t all_pods = 0;
  for (const RsCounts& rs : all) all_pods += rs.spec;
  int64_t min_available = replicas - max_unavailable;
  int64_t new_unavailable = new_rs.spec - new_rs.available;
  return all_pods - min_available - new_unavailable;
}

std::vector<int64_t> CleanupUnhealthy(const std::vector<RsCounts>& old, int64_t max_cleanup) {
  std::vector<int64_t> out;
  int64_t total = 0;
  for (const RsCounts& rs : old) {
    int64_t spec = rs.spec;
    if (total < max_cleanup && rs.spec != 0 && rs.spec != rs.available) {
      int64_t down = std::min(max_cleanup - total, rs.spec - rs.available);
      if (down > 0) {
        spec -= down;
        total += down;
      }
    }
    out.push_back(spec);
  }
  return out;
}

std::vector<int64_t> ScaleDownOld(int64_t replicas, int64_t max_unavailable,
                                  const std::vector<RsCounts>& all,
                                  const std::vector<RsCounts>& old) {
  std::vector<int64_t> out;
  for (const RsCounts& rs : old) out.push_back(rs.spec);
  int64_t min_available = replicas - max_unavailable;
  int64_t available = 0;
  for (const RsCounts& rs : all) available += AvailableCount(rs);
  if (available <= min_available) return out;
  int64_t to_scale = available - min_available;
  int64_t done = 0;
  for (size_t i = 0; i < old.size() && done < to_scale; ++i) {
    if (old[i].spec == 0) continue;
    int64_t down = std::min(old[i].spec, to_scale - done);
    out[i] = old[i].spec - down;
    done += down;
  }
  return out;
}

namespace {

// Go's math.Round: half away from zero.
int64_t RoundHalfAway(double x) {
  return static_cast<int64_t>(std::round(x));
}

int64_t Fraction(const ProportionalRs& rs, int64_t replicas, int64_t max_surge,
                 int64_t status_replicas) {
  if (replicas == 0) return -rs.replicas;
  int64_t deployment_replicas = replicas + max_surge;
  int64_t annotated = rs.max_replicas.value_or(status_replicas);
  if (annotated <= 0) return 0;  // nothing to scale from: the leftover goes to the largest
  double size =
      static_cast<double>(rs.replicas * deployment_replicas) / static_cast<double>(annotated);
  return RoundHalfAway(size) - rs.replicas;
}

}  // namespace

std::vector<int64_t> ScaleProportionally(const std::vector<ProportionalRs>& active,
                                         int64_t replicas, int64_t max_surge,
                                         int64_t status_replicas) {
  std::vector<int64_t> out;
  for (const ProportionalRs& rs : active) out.push_back(rs.replicas);
  if (active.empty()) return out;
  int64_t all = 0;
  for (const ProportionalRs& rs : active) all += rs.replicas;
  int64_t allowed = replicas > 0 ? replicas + max_surge : 0;
  int64_t to_add = allowed - all;
  if (to_add == 0) return out;
  std::vector<size_t> order(active.size());
  std::iota(order.begin(), order.end(), 0);
  // Larger first; among equals, newer first when growing, older first when shrinking.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ProportionalRs& x = active[a];
    const ProportionalRs& y = active[b];
    if (x.replicas != y.replicas) return x.replicas > y.replicas;
    if (x.created != y.created) return to_add > 0 ? x.created > y.created : x.created < y.created;
    return to_add > 0 ? x.name > y.name : x.name < y.name;
  });
  int64_t added = 0;
  for (size_t i : order) {
    const ProportionalRs& rs = active[i];
    int64_t proportion = 0;
    if (rs.replicas != 0 && to_add != added) {
      int64_t fraction = Fraction(rs, replicas, max_surge, status_replicas);
      int64_t left = to_add - added;
      proportion = to_add > 0 ? std::min(fraction, left) : std::max(fraction, left);
    }
    out[i] = rs.replicas + proportion;
    added += proportion;
  }
  // Leftovers (rounding) go to the largest.
  size_t first = order.front();
  out[first] = std::max<int64_t>(out[first] + (to_add - added), 0);
  return out;
}

}  // namespace converge::controllers::deployment
