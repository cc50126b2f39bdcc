#include "api/packed_object.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <span>
#include <vector>

namespace converge::api {

namespace {

// Bytes from `at` to the next multiple of `align` (a power of two).
size_t PaddingFor(uintptr_t at, size_t align) {
  return static_cast<size_t>(-at) & (align - 1);
}

void* HeapAllocate(size_t bytes, size_t align) {
  if (align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) return ::operator new(bytes);
  return ::operator new(bytes, std::align_val_t(align));
}

// Unsized: clang before 19 declares the sized forms only with -fsized-deallocation.
void HeapDeallocate(void* p, size_t align) {
  if (align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete(p);
  } else {
    ::operator delete(p, std::align_val_t(align));
  }
}

// The step between the size classes around `bytes` (> 16): see AllocatorSizeClass.
size_t ClassStep(size_t bytes) {
  const int width = std::bit_width(bytes - 1);
  return width <= 6 ? 16 : size_t{1} << (width - 3);
}

// The largest size class that is at most `bytes` (> 16).
size_t ClassBelow(size_t bytes) {
  const size_t above = AllocatorSizeClass(bytes);
  return above == bytes ? bytes : above - ClassStep(above);
}

// A request the copy makes of its storage.
struct Request {
  uint32_t bytes;
  uint32_t align;
  uint32_t end;  // where it ends when every request is served front to back from one block
};

// Records what a copy asks for and serves it from the thread's scratch memory, reused by the
// next measure.
class MeasuringResource final : public json::memory_resource {
 public:
  MeasuringResource() { requests_.clear(); }
  // The requests in the order the copy made them (the thread's; valid until the next measure).
  const std::vector<Request>& requests() const { return requests_; }
  // What one block would hold: the requests served front to back, padded as in a block at the
  // heap's alignment.
  size_t one_block() const { return offset_; }

 private:
  void* do_allocate(size_t bytes, size_t align) override {
    offset_ += PaddingFor(offset_, align) + bytes;
    requests_.push_back({static_cast<uint32_t>(bytes), static_cast<uint32_t>(align),
                         static_cast<uint32_t>(offset_)});
    return scratch_.allocate(bytes, align);
  }
  void do_deallocate(void*, size_t, size_t) override {}
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  static std::vector<Request>& Requests() {
    thread_local std::vector<Request> requests;
    return requests;
  }
  // Enough for a pod's or a node's tree (~8 KB); per thread that packs (writers, the watch
  // cache), so kept small.
  static constexpr size_t kScratchBytes = 16 * 1024;
  static std::byte* Scratch() {
    thread_local std::unique_ptr<std::byte[]> buffer(new std::byte[kScratchBytes]);
    return buffer.get();
  }

  // Beyond the thread's buffer, the heap, freed with the measure.
  json::monotonic_resource scratch_{Scratch(), kScratchBytes, json::storage_ptr()};
  std::vector<Request>& requests_ = Requests();  // looked up once, not per request
  size_t offset_ = 0;
};

}  // namespace
}  // namespace converge::api

// A measuring copy is dropped without being freed node by node: its memory is the scratch.
template <>
struct boost::json::is_deallocate_trivial<converge::api::MeasuringResource> : std::true_type {};

namespace converge::api {
namespace {

// Where a copy goes: a head block whose size is a size class, and, when the copy is larger than
// that, a tail block for the rest. One block of the copy's exact size would be rounded up to the
// next class (a 7.7 KB pod to 8 KiB: 5 % of every shared pod); the head takes the class below
// and the tail the remainder (7 KiB + ~600 bytes, which rounds to 640).
struct Layout {
  size_t head = 0;
  size_t tail = 0;
  size_t measured = 0;  // one block's size: the requests served front to back
};

// Where each request of a copy goes: into the head while it fits there, else into the tail (so
// small requests late in the copy still fill the head's end). PackedResource follows the same
// rule; Plan runs it with an unbounded tail to size it.
struct Cursor {
  size_t head_used = 0;
  size_t tail_used = 0;

  enum class Block { kHead, kTail, kNone };
  // Takes `bytes` at `align` from the head (capacity `head`) if it fits, else from the tail
  // (capacity `tail`) if it fits; returns where, and the offset in that block.
  Block Take(size_t bytes, size_t align, size_t head, size_t tail, size_t* offset) {
    const size_t head_pad = PaddingFor(head_used, align);
    if (head_pad + bytes <= head - head_used) {
      *offset = head_used + head_pad;
      head_used += head_pad + bytes;
      return Block::kHead;
    }
    const size_t tail_pad = PaddingFor(tail_used, align);
    if (tail_pad + bytes <= tail - tail_used) {
      *offset = tail_used + tail_pad;
      tail_used += tail_pad + bytes;
      return Block::kTail;
    }
    return Block::kNone;
  }
};

// `total`: what one block would hold (MeasuringResource::one_block).
Layout Plan(std::span<const Request> requests, size_t total) {
  const Layout one{total, 0, total};
  if (total <= 16 || AllocatorSizeClass(total) == total) return one;
  const size_t head = ClassBelow(total);
  // Up to the first request that ends beyond the head, the head is filled as one block would be;
  // only from there on do requests go one way or the other.
  auto first_out = std::partition_point(requests.begin(), requests.end(),
                                        [head](const Request& r) { return r.end <= head; });
  Cursor cursor;
  cursor.head_used = first_out == requests.begin() ? 0 : std::prev(first_out)->end;
  size_t offset = 0;
  for (auto r = first_out; r != requests.end(); ++r) {
    cursor.Take(r->bytes, r->align, head, SIZE_MAX, &offset);
  }
  const Layout two{head, cursor.tail_used, total};
  // Worth it only if the two classes are smaller than the one (not the case just below a class).
  if (two.tail == 0 || two.head + AllocatorSizeClass(two.tail) >= AllocatorSizeClass(total)) {
    return one;
  }
  return two;
}

// The head block and the tail block (if any), filled by the copy as Plan laid them out;
// afterwards (sealed) every allocation goes to the heap, so concurrent copies from the packed
// tree never touch the resource's state.
class PackedResource final : public json::memory_resource {
 public:
  // `self` receives the resource's address (Boost.JSON's shared wrapper holds it as a member and
  // does not hand it out).
  PackedResource(const Layout& layout, PackedResource** self);
  ~PackedResource() override;
  PackedResource(const PackedResource&) = delete;
  PackedResource& operator=(const PackedResource&) = delete;

  void Seal() { sealed_ = true; }
  PackedStats Stats() const;

 private:
  void* do_allocate(size_t bytes, size_t align) override;
  void do_deallocate(void* p, size_t bytes, size_t align) override;
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }
  static bool Within(const std::byte* p, const std::byte* begin, size_t size) {
    return begin != nullptr && p >= begin && p < begin + size;
  }

  const Layout layout_;
  std::byte* const head_;
  std::byte* const tail_;  // null without one
  Cursor cursor_;
  bool sealed_ = false;
  size_t overflowed_ = 0;
};

PackedResource::PackedResource(const Layout& layout, PackedResource** self)
    : layout_(layout),
      head_(static_cast<std::byte*>(HeapAllocate(layout.head, alignof(std::max_align_t)))),
      tail_(layout.tail == 0
                ? nullptr
                : static_cast<std::byte*>(HeapAllocate(layout.tail, alignof(std::max_align_t)))) {
  *self = this;
}

PackedResource::~PackedResource() {
  HeapDeallocate(head_, alignof(std::max_align_t));
  if (tail_ != nullptr) HeapDeallocate(tail_, alignof(std::max_align_t));
}

PackedStats PackedResource::Stats() const {
  PackedStats s;
  s.blocks = tail_ == nullptr ? 1 : 2;
  s.measured = layout_.measured;
  s.capacity = layout_.head + layout_.tail;
  s.tail = layout_.tail;
  s.used = cursor_.head_used + cursor_.tail_used;
  s.tail_used = cursor_.tail_used;
  s.overflowed = overflowed_;
  s.allocated =
      AllocatorSizeClass(layout_.head) + (tail_ == nullptr ? 0 : AllocatorSizeClass(layout_.tail));
  return s;
}

void* PackedResource::do_allocate(size_t bytes, size_t align) {
  if (!sealed_) {
    // The blocks are at the heap's alignment, so offsets pad as Plan's did.
    size_t offset = 0;
    switch (cursor_.Take(bytes, align, layout_.head, layout_.tail, &offset)) {
      case Cursor::Block::kHead: return head_ + offset;
      case Cursor::Block::kTail: return tail_ + offset;
      case Cursor::Block::kNone: ++overflowed_; break;
    }
  }
  return HeapAllocate(bytes, align);
}

void PackedResource::do_deallocate(void* p, size_t /*bytes*/, size_t align) {
  const auto* at = static_cast<const std::byte*>(p);
  if (Within(at, head_, layout_.head) || Within(at, tail_, layout_.tail)) return;  // freed whole
  HeapDeallocate(p, align);
}

}  // namespace

size_t AllocatorSizeClass(size_t bytes) {
  if (bytes <= 16) return 16;
  const size_t step = ClassStep(bytes);
  return (bytes + step - 1) / step * step;
}

Object PackedCopy(const json::object& doc, PackedStats* stats) {
  Layout layout;
  {
    MeasuringResource measure;
    json::object probe(doc, json::storage_ptr(&measure));
    layout = Plan(measure.requests(), measure.one_block());
  }
  PackedResource* resource = nullptr;  // owned by the storage_ptrs of the tree
  json::storage_ptr sp = json::make_shared_resource<PackedResource>(layout, &resource);
  json::object packed(doc, sp);
  resource->Seal();
  if (stats != nullptr) *stats = resource->Stats();
  return Object(std::move(packed));
}

}  // namespace converge::api
