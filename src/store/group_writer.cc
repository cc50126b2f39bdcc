#include "store/group_writer.h"

namespace converge::store {

// The newest state (the index at kLatest over the writer's records) overlaid with the group's
// own writes.
class GroupWriter::OverlayView : public KeyView {
 public:
  explicit OverlayView(GroupWriter* w) : w_(w), base_(w->index_, w->records_, Index::kLatest) {}

  util::Status List(std::string_view start, std::string_view end, std::vector<Item>* out) override {
    std::vector<Item> base;
    CONVERGE_RETURN_IF_ERROR(base_.List(start, end, &base));
    if (w_->overlay_.empty()) {
      *out = std::move(base);
      return util::Status::Ok();
    }
    // Merge the two key-ordered sequences; the overlay wins on equal keys.
    auto& overlay = w_->overlay_;
    auto it = end.empty() ? overlay.find(start) : overlay.lower_bound(start);
    auto in_range = [&](decltype(it) i) {
      return i != overlay.end() && KeyInRange(i->first, start, end);
    };
    size_t b = 0;
    while (b < base.size() || in_range(it)) {
      if (in_range(it) && (b == base.size() || it->first <= base[b].key)) {
        if (b < base.size() && it->first == base[b].key) ++b;
        if (it->second.live) out->push_back(Item{it->first, it->second.state, it->second.kv});
        ++it;
      } else {
        out->push_back(std::move(base[b++]));
      }
    }
    return util::Status::Ok();
  }

  util::StatusOr<KeyValuePtr> Materialize(const Item& item, bool keys_only) override {
    return base_.Materialize(item, keys_only);
  }

  // The value `item` replaces, for its event: as a key-value if it is in memory or `now` (the
  // caller answers with it), else where it is stored (*at), for the watchers that ask to read.
  util::Status Previous(const Item& item, bool now, KeyValuePtr* prev, RevisionPair* at) {
    if (item.kv || now) {
      CONVERGE_ASSIGN_OR_RETURN(*prev, base_.Materialize(item, /*keys_only=*/false));
      return util::Status::Ok();
    }
    *at = item.state.mod;
    return util::Status::Ok();
  }

 private:
  GroupWriter* w_;
  IndexView base_;
};

GroupWriter::GroupWriter(const ReadView* records, const Index* index, Revision latest,
                         Revision compact, wal::GroupEncoder* out)
    : records_(records), index_(index), compact_(compact), out_(out), latest_(latest) {}

util::Status GroupWriter::CheckRangeRevision(const RangeRequest& req) const {
  if (req.revision == 0) return util::Status::Ok();
  if (req.revision > latest_) return FutureRevisionError(req.revision, latest_);
  if (req.revision < compact_) return CompactedError(compact_);
  return util::Status::Ok();
}

ValueFrames CompressPutValues(const TxnRequest& req) {
  ValueFrames frames;
  for (const std::vector<RequestOp>* ops : {&req.success, &req.failure}) {
    for (const RequestOp& op : *ops) {
      const auto* p = std::get_if<PutRequest>(&op);
      if (p == nullptr) continue;
      // The caller's frame, if it says it holds this value (a cheap check: its length).
      if (p->compressed_value != nullptr &&
          CompressedValueSize(*p->compressed_value) == p->value.size()) {
        frames.push_back(p->compressed_value);
        continue;
      }
      std::string frame;
      frames.push_back(CompressValue(p->value, &frame)
                           ? std::make_shared<const std::string>(std::move(frame))
                           : nullptr);
    }
  }
  return frames;
}

util::StatusOr<TxnResponse> GroupWriter::Apply(TxnRequest& req, const ValueFrames& frames) {
  OverlayView view(this);
  bool succeeded = true;
  for (const Compare& c : req.compare) {
    CONVERGE_ASSIGN_OR_RETURN(bool ok, EvaluateCompare(view, c));
    if (!ok) {
      succeeded = false;
      break;
    }
  }
  std::vector<RequestOp>& ops = succeeded ? req.success : req.failure;
  for (const RequestOp& op : ops) {
    if (const auto* r = std::get_if<RangeRequest>(&op))
      CONVERGE_RETURN_IF_ERROR(CheckRangeRevision(*r));
  }

  // The frames of this branch's puts follow those of the success branch's.
  size_t frame_at = 0;
  if (!succeeded) {
    for (const RequestOp& op : req.success) frame_at += std::holds_alternative<PutRequest>(op);
  }
  const Revision rev = latest_ + 1;
  int64_t sub = 0;
  auto events = std::make_shared<RevisionEvents>();
  events->revision = rev;
  TxnResponse resp;
  resp.succeeded = succeeded;
  resp.responses.reserve(ops.size());
  std::vector<size_t> ranges;  // responses whose header is set at the end
  for (RequestOp& op : ops) {
    if (auto* r = std::get_if<RangeRequest>(&op)) {
      CONVERGE_ASSIGN_OR_RETURN(RangeResponse rr, Range(*r));
      ranges.push_back(resp.responses.size());
      resp.responses.emplace_back(std::move(rr));
    } else if (auto* p = std::get_if<PutRequest>(&op)) {
      PutResponse pr;
      static const std::string kStoredAsItIs;
      const std::string* frame = nullptr;
      if (frame_at < frames.size()) {
        frame = frames[frame_at] != nullptr ? frames[frame_at].get() : &kStoredAsItIs;
      }
      ++frame_at;
      CONVERGE_RETURN_IF_ERROR(Put(*p, frame, rev, &sub, &pr, events.get()));
      resp.responses.emplace_back(std::move(pr));
    } else if (auto* d = std::get_if<DeleteRangeRequest>(&op)) {
      DeleteRangeResponse dr;
      CONVERGE_RETURN_IF_ERROR(Delete(*d, rev, &sub, &dr, events.get()));
      resp.responses.emplace_back(std::move(dr));
    }
  }
  if (sub > 0) {
    latest_ = rev;
    events_.push_back(std::move(events));
  }
  resp.header_revision = latest_;
  for (ResponseOp& r : resp.responses) {
    std::visit([&](auto& x) { x.header_revision = latest_; }, r);
  }
  return resp;
}

util::StatusOr<RangeResponse> GroupWriter::Range(const RangeRequest& req) {
  if (req.revision != 0) {
    IndexView past(index_, records_, req.revision);
    return EvaluateRange(past, req, latest_);
  }
  OverlayView view(this);
  return EvaluateRange(view, req, latest_);
}

util::Status GroupWriter::Put(PutRequest& put, const std::string* frame, Revision rev, int64_t* sub,
                              PutResponse* resp, RevisionEvents* events) {
  OverlayView view(this);
  std::vector<KeyView::Item> cur;
  CONVERGE_RETURN_IF_ERROR(view.List(put.key, "", &cur));
  KeyValuePtr prev;
  RevisionPair prev_at;
  if (!cur.empty()) {
    CONVERGE_RETURN_IF_ERROR(view.Previous(cur[0], put.prev_kv, &prev, &prev_at));
  }
  const RevisionPair at{rev, (*sub)++};
  auto kv = std::make_shared<KeyValue>();
  kv->key = std::move(put.key);
  kv->value = std::move(put.value);
  kv->create_revision = cur.empty() ? rev : cur[0].state.create_revision;
  kv->mod_revision = rev;
  kv->version = cur.empty() ? 1 : cur[0].state.version + 1;
  kv->lease = put.lease;
  RecordView record;
  record.key = kv->key;
  record.value = kv->value;
  record.create_revision = kv->create_revision;
  record.version = kv->version;
  record.lease = kv->lease;
  record.prev = cur.empty() ? RevisionPair{} : cur[0].state.mod;
  std::string own_frame;
  if (frame == nullptr) {
    CompressRecordValue(&record, &own_frame);
  } else if (!frame->empty()) {
    record.value = *frame;
    record.compressed = true;
  }
  out_->AddChange(at, record);
  overlay_[kv->key] = OverlayEntry{true, KeyState{at, kv->create_revision, kv->version}, kv};
  changes_.push_back(Index::Change{kv->key, at, false});
  if (put.prev_kv) resp->prev_kv = prev;
  events->Add(Event{Event::Type::kPut, std::move(kv), std::move(prev)}, prev_at);
  return util::Status::Ok();
}

util::Status GroupWriter::Delete(const DeleteRangeRequest& del, Revision rev, int64_t* sub,
                                 DeleteRangeResponse* resp, RevisionEvents* events) {
  OverlayView view(this);
  std::vector<KeyView::Item> items;
  CONVERGE_RETURN_IF_ERROR(view.List(del.key, del.range_end, &items));
  for (KeyView::Item& item : items) {
    KeyValuePtr prev;
    RevisionPair prev_at;
    CONVERGE_RETURN_IF_ERROR(view.Previous(item, del.prev_kv, &prev, &prev_at));
    const RevisionPair at{rev, (*sub)++};
    RecordView record;
    record.key = item.key;
    record.create_revision = item.state.create_revision;
    record.version = item.state.version;
    record.tombstone = true;
    record.prev = item.state.mod;
    out_->AddChange(at, record);
    auto tomb = std::make_shared<KeyValue>();
    tomb->key = item.key;
    tomb->mod_revision = rev;
    changes_.push_back(Index::Change{item.key, at, true});
    overlay_[std::move(item.key)] = OverlayEntry{false, KeyState{at, 0, 0}, nullptr};
    ++resp->deleted;
    if (del.prev_kv) resp->prev_kvs.push_back(prev);
    events->Add(Event{Event::Type::kDelete, std::move(tomb), std::move(prev)}, prev_at);
  }
  return util::Status::Ok();
}

}  // namespace converge::store
