#include "scheduler/node_selector.h"

#include <algorithm>
#include <charconv>

#include "api/object.h"

namespace converge::scheduler {

namespace json = boost::json;

namespace {

// strconv.ParseInt(s, 10, 64): optional sign, digits, nothing else.
std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string_view digits = s;
  if (digits[0] == '+') digits.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  return v;
}

std::optional<NodeSelectorRequirement> ParseRequirement(api::View v, bool field) {
  api::ObjectView o = v.if_object();
  if (!o) return std::nullopt;
  NodeSelectorRequirement r;
  r.key = std::string(api::FindString(o, {"key"}));
  std::string_view op = api::FindString(o, {"operator"});
  if (api::ArrayView values = api::FindArray(o, {"values"})) {
    for (api::View x : *values) {
      if (std::optional<std::string_view> s = x.if_string()) r.values.emplace_back(*s);
    }
  }
  using Op = NodeSelectorRequirement::Op;
  if (op == "In") {
    r.op = Op::kIn;
  } else if (op == "NotIn") {
    r.op = Op::kNotIn;
  } else if (op == "Exists") {
    r.op = Op::kExists;
  } else if (op == "DoesNotExist") {
    r.op = Op::kDoesNotExist;
  } else if (op == "Gt") {
    r.op = Op::kGt;
  } else if (op == "Lt") {
    r.op = Op::kLt;
  } else {
    return std::nullopt;
  }
  if (field) {
    // Only metadata.name, only In/NotIn, exactly one value.
    if (r.key != "metadata.name" || (r.op != Op::kIn && r.op != Op::kNotIn) ||
        r.values.size() != 1) {
      return std::nullopt;
    }
    return r;
  }
  switch (r.op) {
    case Op::kIn:
    case Op::kNotIn:
      if (r.values.empty()) return std::nullopt;
      break;
    case Op::kExists:
    case Op::kDoesNotExist:
      if (!r.values.empty()) return std::nullopt;
      break;
    case Op::kGt:
    case Op::kLt: {
      if (r.values.size() != 1) return std::nullopt;
      std::optional<int64_t> n = ParseInt64(r.values[0]);
      if (!n) return std::nullopt;
      r.number = *n;
      break;
    }
  }
  return r;
}

}  // namespace

Labels ParseLabels(api::ObjectView labels) {
  Labels out;
  out.reserve(labels.size());
  for (api::Member m : labels) {
    out.emplace_back(std::string(m.key()), std::string(m.value().as_string()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::string* LabelValue(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

bool NodeSelectorRequirement::MatchesLabels(const Labels& labels) const {
  const std::string* v = LabelValue(labels, key);
  auto in_values = [&] { return std::find(values.begin(), values.end(), *v) != values.end(); };
  switch (op) {
    case Op::kIn: return v && in_values();
    case Op::kNotIn: return !v || !in_values();
    case Op::kExists: return v != nullptr;
    case Op::kDoesNotExist: return v == nullptr;
    case Op::kGt:
    case Op::kLt: {
      if (!v) return false;
      std::optional<int64_t> n = ParseInt64(*v);
      if (!n) return false;
      return op == Op::kGt ? *n > number : *n < number;
    }
  }
  return false;
}

bool NodeSelectorTerm::Matches(std::string_view node_name, const Labels& labels) const {
  if (!valid) return false;
  for (const NodeSelectorRequirement& r : match_expressions) {
    if (!r.MatchesLabels(labels)) return false;
  }
  for (const NodeSelectorRequirement& r : match_fields) {
    bool equal = node_name == r.values[0];
    if (r.op == NodeSelectorRequirement::Op::kIn ? !equal : equal) return false;
  }
  return true;
}

std::optional<NodeSelectorTerm> ParseNodeSelectorTerm(api::ObjectView term) {
  api::ArrayView exprs = api::FindArray(term, {"matchExpressions"});
  api::ArrayView fields = api::FindArray(term, {"matchFields"});
  if ((!exprs || exprs->empty()) && (!fields || fields->empty())) return std::nullopt;
  NodeSelectorTerm t;
  if (exprs) {
    for (api::View e : *exprs) {
      std::optional<NodeSelectorRequirement> r = ParseRequirement(e, /*field=*/false);
      if (!r) {
        t.valid = false;
        continue;
      }
      t.match_expressions.push_back(std::move(*r));
    }
  }
  if (fields) {
    for (api::View e : *fields) {
      std::optional<NodeSelectorRequirement> r = ParseRequirement(e, /*field=*/true);
      if (!r) {
        t.valid = false;
        continue;
      }
      t.match_fields.push_back(std::move(*r));
    }
  }
  return t;
}

bool NodeSelector::Matches(std::string_view node_name, const Labels& labels) const {
  for (const NodeSelectorTerm& t : terms) {
    if (t.Matches(node_name, labels)) return true;
  }
  return false;
}

NodeSelector ParseNodeSelector(api::ObjectView selector) {
  NodeSelector s;
  if (api::ArrayView terms = api::FindArray(selector, {"nodeSelectorTerms"})) {
    for (api::View t : *terms) {
      if (!t.is_object()) continue;
      if (std::optional<NodeSelectorTerm> term = ParseNodeSelectorTerm(t.as_object())) {
        s.terms.push_back(std::move(*term));
      }
    }
  }
  return s;
}

std::vector<PreferredSchedulingTerm> ParsePreferredSchedulingTerms(api::ArrayView terms) {
  std::vector<PreferredSchedulingTerm> out;
  for (api::View t : terms) {
    if (!t.is_object()) continue;
    int64_t weight = api::FindInt(t.as_object(), {"weight"});
    api::ObjectView pref = api::FindObject(t.as_object(), {"preference"});
    if (weight == 0 || !pref) continue;
    std::optional<NodeSelectorTerm> term = ParseNodeSelectorTerm(*pref);
    if (!term) continue;
    out.push_back({weight, std::move(*term)});
  }
  return out;
}

bool RequiredNodeAffinity::Matches(std::string_view node_name, const Labels& labels) const {
  for (const auto& [k, v] : node_selector) {
    const std::string* have = LabelValue(labels, k);
    if (!have || *have != v) return false;
  }
  return !required || required->Matches(node_name, labels);
}

RequiredNodeAffinity ParseRequiredNodeAffinity(api::ObjectView pod_spec) {
  RequiredNodeAffinity a;
  a.node_selector = ParseLabels(api::FindObject(pod_spec, {"nodeSelector"}));
  if (api::ObjectView req = api::FindObject(
          pod_spec,
          {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})) {
    a.required = ParseNodeSelector(*req);
  }
  return a;
}

}  // namespace converge::scheduler
