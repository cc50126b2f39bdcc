#include "store/txn_eval.h"

#include <algorithm>

namespace converge::store {

namespace {

template <typename T>
bool CompareResult(const T& lhs, const T& rhs, Compare::Result result) {
  switch (result) {
    case Compare::Result::kEqual: return lhs == rhs;
    case Compare::Result::kNotEqual: return lhs != rhs;
    case Compare::Result::kLess: return lhs < rhs;
    case Compare::Result::kGreater: return lhs > rhs;
  }
  return false;
}

bool CompareOne(const KeyValue& kv, const Compare& c) {
  switch (c.target) {
    case Compare::Target::kVersion: return CompareResult(kv.version, c.number, c.result);
    case Compare::Target::kCreateRevision:
      return CompareResult(kv.create_revision, c.number, c.result);
    case Compare::Target::kModRevision: return CompareResult(kv.mod_revision, c.number, c.result);
    case Compare::Target::kValue:
      return CompareResult(std::string_view(kv.value), std::string_view(c.value), c.result);
  }
  return false;
}

util::Status EmptyKey() {
  return util::InvalidArgument("etcdserver: key is not provided");
}

util::Status DuplicateKey() {
  return util::InvalidArgument("etcdserver: duplicate key given in txn request");
}

util::Status ValidateBranch(const std::vector<RequestOp>& ops, size_t* bytes) {
  std::vector<std::string_view> puts;
  std::vector<const DeleteRangeRequest*> deletes;
  for (const RequestOp& op : ops) {
    if (const auto* r = std::get_if<RangeRequest>(&op)) {
      CONVERGE_RETURN_IF_ERROR(ValidateRange(*r));
      *bytes += r->key.size() + r->range_end.size();
    } else if (const auto* p = std::get_if<PutRequest>(&op)) {
      if (p->key.empty()) return EmptyKey();
      puts.push_back(p->key);
      *bytes += p->key.size() + p->value.size();
    } else if (const auto* d = std::get_if<DeleteRangeRequest>(&op)) {
      if (d->key.empty()) return EmptyKey();
      deletes.push_back(d);
      *bytes += d->key.size() + d->range_end.size();
    }
  }
  std::sort(puts.begin(), puts.end());
  if (std::adjacent_find(puts.begin(), puts.end()) != puts.end()) return DuplicateKey();
  for (const DeleteRangeRequest* d : deletes) {
    for (std::string_view key : puts) {
      if (KeyInRange(key, d->key, d->range_end)) return DuplicateKey();
    }
  }
  return util::Status::Ok();
}

}  // namespace

util::Status IndexView::List(std::string_view start, std::string_view end, std::vector<Item>* out) {
  index_->Visit(start, end, at_, [out](std::string_view key, const KeyState& state) {
    out->push_back(Item{std::string(key), state, nullptr});
    return true;
  });
  return util::Status::Ok();
}

util::Status IndexView::GetRecord(const Item& item, RecordView* record) {
  util::Status st = records_->Get(item.state.mod, record);
  if (st.code() == util::Code::kNotFound) {
    return util::DataLoss("store: the index names revision " + std::to_string(item.state.mod.main) +
                          " of \"" + item.key + "\" but the history has no such record");
  }
  return st;
}

util::StatusOr<KeyValuePtr> IndexView::Materialize(const Item& item, bool keys_only) {
  if (item.kv) return item.kv;
  RecordView record;
  CONVERGE_RETURN_IF_ERROR(GetRecord(item, &record));
  return MakeKeyValue(item.state.mod, record, keys_only);
}

util::StatusOr<bool> EvaluateCompare(KeyView& view, const Compare& c) {
  std::vector<KeyView::Item> items;
  CONVERGE_RETURN_IF_ERROR(view.List(c.key, c.range_end, &items));
  if (items.empty()) {
    if (c.target == Compare::Target::kValue) return false;
    return CompareOne(KeyValue{}, c);
  }
  const bool need_value = c.target == Compare::Target::kValue;
  for (const KeyView::Item& item : items) {
    if (need_value) {
      CONVERGE_ASSIGN_OR_RETURN(KeyValuePtr kv, view.Materialize(item, /*keys_only=*/false));
      if (!CompareOne(*kv, c)) return false;
    } else {
      KeyValue kv;
      kv.create_revision = item.state.create_revision;
      kv.mod_revision = item.state.mod.main;
      kv.version = item.state.version;
      if (!CompareOne(kv, c)) return false;
    }
  }
  return true;
}

util::StatusOr<RangeResponse> EvaluateRange(KeyView& view, const RangeRequest& req,
                                            Revision header_revision) {
  RangeResponse resp;
  resp.header_revision = header_revision;
  std::vector<KeyView::Item> items;
  CONVERGE_RETURN_IF_ERROR(view.List(req.key, req.range_end, &items));
  resp.count = static_cast<int64_t>(items.size());
  if (req.count_only) return resp;
  size_t n = items.size();
  if (req.limit > 0 && static_cast<size_t>(req.limit) < n) {
    n = static_cast<size_t>(req.limit);
    resp.more = true;
  }
  resp.kvs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    CONVERGE_ASSIGN_OR_RETURN(KeyValuePtr kv, view.Materialize(items[i], req.keys_only));
    if (req.keys_only && !kv->value.empty()) {
      auto stripped = std::make_shared<KeyValue>(*kv);
      stripped->value.clear();
      kv = std::move(stripped);
    }
    resp.kvs.push_back(std::move(kv));
  }
  return resp;
}

bool IsReadOnly(const TxnRequest& req) {
  auto reads = [](const std::vector<RequestOp>& ops) {
    return std::all_of(ops.begin(), ops.end(), [](const RequestOp& op) {
      return std::holds_alternative<RangeRequest>(op);
    });
  };
  return reads(req.success) && reads(req.failure);
}

util::Status ValidateRange(const RangeRequest& req) {
  if (req.key.empty()) return EmptyKey();
  if (req.limit < 0) return util::InvalidArgument("etcdserver: negative limit");
  if (req.revision < 0) return util::InvalidArgument("etcdserver: negative revision");
  return util::Status::Ok();
}

util::Status ValidateTxn(const TxnRequest& req, size_t max_request_bytes, size_t* bytes) {
  *bytes = 0;
  CONVERGE_RETURN_IF_ERROR(ValidateBranch(req.success, bytes));
  CONVERGE_RETURN_IF_ERROR(ValidateBranch(req.failure, bytes));
  for (const Compare& c : req.compare) *bytes += c.key.size() + c.range_end.size() + c.value.size();
  if (*bytes > max_request_bytes) {
    return util::InvalidArgument("etcdserver: request is too large");
  }
  return util::Status::Ok();
}

}  // namespace converge::store
