#include "api/protobuf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "api/builtin_resources.h"
#include "api/special_types.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using util::InvalidArgument;
using util::Status;
using util::StatusOr;

enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads protobuf wire data from a borrowed buffer; every read checks bounds.
class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  bool done() const { return p_ == end_; }

  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      uint8_t b = static_cast<uint8_t>(*p_++);
      if (shift == 63 && b > 1) return false;  // more than 64 bits
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool ReadFixed(int bytes, uint64_t* v) {
    if (end_ - p_ < bytes) return false;
    uint64_t r = 0;
    for (int i = 0; i < bytes; ++i)
      r |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += bytes;
    *v = r;
    return true;
  }

  bool ReadLengthDelimited(std::string_view* out) {
    uint64_t len;
    if (!ReadVarint(&len) || len > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(p_, static_cast<size_t>(len));
    p_ += len;
    return true;
  }

  bool Skip(int wire_type) {
    uint64_t v;
    std::string_view s;
    switch (wire_type) {
      case kVarint: return ReadVarint(&v);
      case kFixed64: return ReadFixed(8, &v);
      case kLengthDelimited: return ReadLengthDelimited(&s);
      case kFixed32: return ReadFixed(4, &v);
      default: return false;  // groups (3, 4) are not used by Kubernetes
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// Reads a tag; false at a malformed one.
bool ReadTag(Reader& r, int* number, int* wire_type) {
  uint64_t key;
  if (!r.ReadVarint(&key)) return false;
  uint64_t n = key >> 3;
  if (n == 0 || n > (1u << 29) - 1) return false;
  *number = static_cast<int>(n);
  *wire_type = static_cast<int>(key & 7);
  return true;
}

std::string_view WireTypeName(int wt) {
  switch (wt) {
    case kVarint: return "varint";
    case kFixed64: return "fixed64";
    case kLengthDelimited: return "length-delimited";
    case kFixed32: return "fixed32";
    default: return "unknown";
  }
}

bool IsPackable(ValueKind k) {
  return k == ValueKind::kBool || k == ValueKind::kInt32 || k == ValueKind::kInt64 ||
         k == ValueKind::kFloat || k == ValueKind::kDouble;
}

int NaturalWireType(ValueKind k) {
  switch (k) {
    case ValueKind::kBool:
    case ValueKind::kInt32:
    case ValueKind::kInt64: return kVarint;
    case ValueKind::kFloat: return kFixed32;
    case ValueKind::kDouble: return kFixed64;
    default: return kLengthDelimited;
  }
}

// What Go's encoder writes for an unset non-pointer field, and so what decoding drops.
bool IsEmptyValue(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return true;
    case json::kind::bool_: return !v.get_bool();
    case json::kind::int64: return v.get_int64() == 0;
    case json::kind::uint64: return v.get_uint64() == 0;
    case json::kind::double_: return v.get_double() == 0;
    case json::kind::string: return v.get_string().empty();
    case json::kind::array: return v.get_array().empty();
    case json::kind::object: return v.get_object().empty();
  }
  return false;
}

class Decoder {
 public:
  explicit Decoder(const ProtobufLimits& limits) : limits_(limits) {}

  // Decodes a message of type `t` into `out` (merging, as protobuf does for repeated occurrences
  // of a message field), then drops the empty values of non-nullable fields.
  Status DecodeInto(std::string_view bytes, const TypeSchema& t, json::object& out, int depth) {
    if (depth > limits_.max_depth) {
      return InvalidArgument("protobuf: objects nest deeper than " +
                             std::to_string(limits_.max_depth) + " levels");
    }
    Reader r(bytes);
    while (!r.done()) {
      int number, wt;
      if (!ReadTag(r, &number, &wt)) return Malformed(t, "a malformed field tag");
      const FieldSchema* f = t.FieldByNumber(number);
      if (f == nullptr) {
        const TypeSchema::InlineEmbed* embed = t.InlineEmbedByNumber(number);
        if (embed != nullptr && wt == kLengthDelimited) {
          std::string_view sub;
          if (!r.ReadLengthDelimited(&sub)) return Malformed(t, "a truncated field");
          CONVERGE_RETURN_IF_ERROR(DecodeInto(sub, *embed->type, out, depth + 1));
          continue;
        }
        if (!r.Skip(wt)) return Malformed(t, "a truncated or malformed unknown field");
        continue;
      }
      path_.push_back(f->name);
      Status st = DecodeField(r, wt, *f, out, depth);
      if (!st.ok()) return st;
      path_.pop_back();
    }
    Prune(t, out);
    return Status::Ok();
  }

  std::string Path() const {
    std::string p;
    for (std::string_view s : path_) {
      if (!p.empty()) p += '.';
      p += s;
    }
    return p;
  }

 private:
  Status Malformed(const TypeSchema& t, std::string_view what) {
    std::string where = path_.empty() ? std::string("the object") : "field " + Path();
    return InvalidArgument("protobuf: " + std::string(what) + " in " + where + " (" + t.name + ")");
  }

  Status FieldError(std::string_view what) {
    return InvalidArgument("protobuf: field " + Path() + ": " + std::string(what));
  }

  Status WrongWireType(int got, int want) {
    return FieldError("wire type " + std::string(WireTypeName(got)) + ", want " +
                      std::string(WireTypeName(want)));
  }

  Status DecodeField(Reader& r, int wt, const FieldSchema& f, json::object& out, int depth) {
    if (f.is_map) {
      if (wt != kLengthDelimited) return WrongWireType(wt, kLengthDelimited);
      std::string_view entry;
      if (!r.ReadLengthDelimited(&entry)) return FieldError("truncated map entry");
      json::value& slot = out[f.name];
      if (!slot.is_object()) slot = json::object();
      return DecodeMapEntry(entry, f, slot.get_object(), depth);
    }
    if (f.repeated) {
      json::value& slot = out[f.name];
      if (!slot.is_array()) slot = json::array();
      json::array& arr = slot.get_array();
      if (wt == kLengthDelimited && IsPackable(f.value.kind)) {
        std::string_view packed;
        if (!r.ReadLengthDelimited(&packed)) return FieldError("truncated packed list");
        Reader pr(packed);
        while (!pr.done()) {
          json::value v;
          CONVERGE_RETURN_IF_ERROR(
              DecodeValue(pr, NaturalWireType(f.value.kind), f.value, &v, depth));
          arr.push_back(std::move(v));
        }
        return Status::Ok();
      }
      json::value v;
      CONVERGE_RETURN_IF_ERROR(DecodeValue(r, wt, f.value, &v, depth));
      arr.push_back(std::move(v));
      return Status::Ok();
    }
    if (f.value.kind == ValueKind::kMessage && f.value.message->special == SpecialType::kNone) {
      // Merge into an earlier occurrence, as protobuf does.
      if (wt != kLengthDelimited) return WrongWireType(wt, kLengthDelimited);
      std::string_view sub;
      if (!r.ReadLengthDelimited(&sub)) return FieldError("truncated message");
      json::value& slot = out[f.name];
      if (!slot.is_object()) slot = json::object();
      return DecodeInto(sub, *f.value.message, slot.get_object(), depth + 1);
    }
    json::value v;
    CONVERGE_RETURN_IF_ERROR(DecodeValue(r, wt, f.value, &v, depth));
    out[f.name] = std::move(v);
    return Status::Ok();
  }

  Status DecodeMapEntry(std::string_view entry, const FieldSchema& f, json::object& map,
                        int depth) {
    Reader r(entry);
    std::string key;
    json::value value;
    bool has_value = false;
    while (!r.done()) {
      int number, wt;
      if (!ReadTag(r, &number, &wt)) return FieldError("malformed map entry");
      if (number == 1) {
        std::string_view k;
        if (wt != kLengthDelimited) return WrongWireType(wt, kLengthDelimited);
        if (!r.ReadLengthDelimited(&k)) return FieldError("truncated map key");
        key = IsValidUtf8(k) ? std::string(k) : SanitizeUtf8(k);
      } else if (number == 2) {
        CONVERGE_RETURN_IF_ERROR(DecodeValue(r, wt, f.value, &value, depth));
        has_value = true;
      } else if (!r.Skip(wt)) {
        return FieldError("malformed map entry");
      }
    }
    map[key] = has_value ? std::move(value) : ZeroValue(f.value);
    return Status::Ok();
  }

  static json::value ZeroValue(const ValueType& vt) {
    switch (vt.kind) {
      case ValueKind::kString:
      case ValueKind::kBytes: return json::string();
      case ValueKind::kBool: return false;
      case ValueKind::kInt32:
      case ValueKind::kInt64: return 0;
      case ValueKind::kFloat:
      case ValueKind::kDouble: return 0.0;
      case ValueKind::kAny: return nullptr;
      case ValueKind::kMessage: break;
    }
    switch (vt.message->special) {
      case SpecialType::kNone: return json::object();
      case SpecialType::kQuantity: return "0";
      case SpecialType::kIntOrString: return 0;
      case SpecialType::kDuration: return "0s";
      case SpecialType::kStringList: return json::array();
      default: return nullptr;
    }
  }

  // Decodes one value of type `vt` (not a list, not a map) that arrived with wire type `wt`.
  Status DecodeValue(Reader& r, int wt, const ValueType& vt, json::value* out, int depth) {
    int want = NaturalWireType(vt.kind);
    if (vt.kind == ValueKind::kAny) {
      return FieldError("holds arbitrary JSON, which has no protobuf form");
    }
    if (wt != want) return WrongWireType(wt, want);
    uint64_t v;
    std::string_view bytes;
    switch (vt.kind) {
      case ValueKind::kBool:
        if (!r.ReadVarint(&v)) return FieldError("truncated varint");
        *out = v != 0;
        return Status::Ok();
      case ValueKind::kInt32:
        if (!r.ReadVarint(&v)) return FieldError("truncated varint");
        *out = static_cast<int64_t>(static_cast<int32_t>(v));
        return Status::Ok();
      case ValueKind::kInt64:
        if (!r.ReadVarint(&v)) return FieldError("truncated varint");
        *out = static_cast<int64_t>(v);
        return Status::Ok();
      case ValueKind::kFloat: {
        if (!r.ReadFixed(4, &v)) return FieldError("truncated fixed32");
        uint32_t bits = static_cast<uint32_t>(v);
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f)) return FieldError("not a finite number");
        *out = static_cast<double>(f);
        return Status::Ok();
      }
      case ValueKind::kDouble: {
        if (!r.ReadFixed(8, &v)) return FieldError("truncated fixed64");
        double d;
        std::memcpy(&d, &v, sizeof d);
        if (!std::isfinite(d)) return FieldError("not a finite number");
        *out = d;
        return Status::Ok();
      }
      case ValueKind::kString:
        if (!r.ReadLengthDelimited(&bytes)) return FieldError("truncated string");
        *out = IsValidUtf8(bytes) ? json::string(bytes) : json::string(SanitizeUtf8(bytes));
        return Status::Ok();
      case ValueKind::kBytes:
        if (!r.ReadLengthDelimited(&bytes)) return FieldError("truncated bytes");
        *out = json::string(Base64Encode(bytes));
        return Status::Ok();
      case ValueKind::kMessage: {
        if (!r.ReadLengthDelimited(&bytes)) return FieldError("truncated message");
        if (vt.message->special != SpecialType::kNone) {
          return DecodeSpecial(bytes, vt.message->special, out, depth);
        }
        json::object o;
        CONVERGE_RETURN_IF_ERROR(DecodeInto(bytes, *vt.message, o, depth + 1));
        *out = std::move(o);
        return Status::Ok();
      }
      case ValueKind::kAny: break;
    }
    return FieldError("unsupported value kind");
  }

  // The small messages with custom JSON forms: read their fields by number.
  Status DecodeSpecial(std::string_view bytes, SpecialType special, json::value* out, int depth) {
    if (depth + 1 > limits_.max_depth) {
      return InvalidArgument("protobuf: objects nest deeper than " +
                             std::to_string(limits_.max_depth) + " levels");
    }
    Reader r(bytes);
    uint64_t n1 = 0, n2 = 0, n3 = 0;
    std::string_view s1, s3;
    json::array items;
    bool any = false;
    while (!r.done()) {
      int number, wt;
      if (!ReadTag(r, &number, &wt)) return FieldError("malformed field tag");
      any = true;
      bool ok;
      if (wt == kVarint && number <= 3) {
        ok = r.ReadVarint(number == 1 ? &n1 : number == 2 ? &n2 : &n3);
      } else if (wt == kLengthDelimited && (number == 1 || number == 3)) {
        std::string_view s;
        ok = r.ReadLengthDelimited(&s);
        if (number == 1) {
          s1 = s;
          if (special == SpecialType::kStringList) {
            items.push_back(json::string(IsValidUtf8(s) ? std::string(s) : SanitizeUtf8(s)));
          }
        } else {
          s3 = s;
        }
      } else {
        ok = r.Skip(wt);
      }
      if (!ok) return FieldError("truncated value");
    }
    // Go's time.Time covers years 1..9999 in RFC 3339.
    constexpr int64_t kMinSeconds = -62135596800, kMaxSeconds = 253402300799;
    switch (special) {
      case SpecialType::kTime:
      case SpecialType::kMicroTime: {
        if (!any) {  // the zero time marshals as null
          *out = nullptr;
          return Status::Ok();
        }
        int64_t secs = static_cast<int64_t>(n1);
        if (secs < kMinSeconds || secs > kMaxSeconds) return FieldError("time out of range");
        *out = special == SpecialType::kTime
                   ? json::string(FormatTime(secs))
                   : json::string(FormatMicroTime(secs, static_cast<int32_t>(n2)));
        return Status::Ok();
      }
      case SpecialType::kDuration:
        *out = json::string(FormatDuration(static_cast<int64_t>(n1)));
        return Status::Ok();
      case SpecialType::kQuantity:
        *out = json::string(IsValidUtf8(s1) ? std::string(s1) : SanitizeUtf8(s1));
        return Status::Ok();
      case SpecialType::kIntOrString:
        if (n1 == 1) {
          *out = json::string(IsValidUtf8(s3) ? std::string(s3) : SanitizeUtf8(s3));
        } else {
          *out = static_cast<int64_t>(static_cast<int32_t>(n2));
        }
        return Status::Ok();
      case SpecialType::kRawExtension:
      case SpecialType::kFieldsV1: return DecodeRawJson(s1, special, out);
      case SpecialType::kStringList: *out = std::move(items); return Status::Ok();
      case SpecialType::kNone: break;
    }
    return FieldError("unsupported special type");
  }

  Status DecodeRawJson(std::string_view raw, SpecialType special, json::value* out) {
    if (raw.empty()) {
      *out = nullptr;
      return Status::Ok();
    }
    if (special == SpecialType::kRawExtension && raw.starts_with(kProtobufMagic)) {
      auto inner = DecodeProtobufObject(raw);
      if (!inner.ok()) return FieldError(inner.status().message());
      *out = std::move(inner).value();
      return Status::Ok();
    }
    boost::system::error_code ec;
    json::value v = json::parse(raw, ec);
    if (ec) return FieldError("embedded JSON is malformed: " + ec.message());
    if (special == SpecialType::kFieldsV1 && !v.is_object()) {
      return FieldError("fieldsV1 is not a JSON object");
    }
    *out = std::move(v);
    return Status::Ok();
  }

  // Drops the values Go's encoder writes for unset non-pointer fields.
  static void Prune(const TypeSchema& t, json::object& out) {
    for (auto it = out.begin(); it != out.end();) {
      const FieldSchema* f = t.Field(it->key());
      bool drop = false;
      if (f != nullptr) {
        if (it->value().is_null()) {
          drop = true;  // a zero Time or empty RawExtension: null in Go's JSON, i.e. unset
        } else if (f->repeated || f->is_map) {
          drop = IsEmptyValue(it->value());
        } else {
          drop = !f->nullable_scalar && IsEmptyValue(it->value());
        }
      }
      it = drop ? out.erase(it) : it + 1;
    }
  }

  const ProtobufLimits& limits_;
  std::vector<std::string_view> path_;  // field names from the root, for error messages
};

// ---- Encoding ---------------------------------------------------------------------------------

class Writer {
 public:
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      buf_ += static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buf_ += static_cast<char>(v);
  }
  void Tag(int number, int wt) { Varint((static_cast<uint64_t>(number) << 3) | wt); }
  void Bytes(int number, std::string_view b) {
    Tag(number, kLengthDelimited);
    Varint(b.size());
    buf_.append(b);
  }
  void VarintField(int number, uint64_t v) {
    Tag(number, kVarint);
    Varint(v);
  }
  void Fixed(int number, int bytes, uint64_t v) {
    Tag(number, bytes == 4 ? kFixed32 : kFixed64);
    for (int i = 0; i < bytes; ++i) buf_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  std::string& buf() { return buf_; }

 private:
  std::string buf_;
};

class Encoder {
 public:
  explicit Encoder(const ProtobufEncodeOptions& opts) : opts_(opts) {}

  Status EncodeMessage(const json::object& obj, const TypeSchema& t, Writer& w, int depth) {
    if (depth > 100) return InvalidArgument("protobuf: objects nest too deeply to encode");
    struct Item {
      int number;
      const FieldSchema* field;
      const TypeSchema* embed;
    };
    std::vector<Item> items;
    for (const FieldSchema& f : t.fields) {
      if (f.number > 0) items.push_back({f.number, &f, nullptr});
    }
    for (const TypeSchema::InlineEmbed& e : t.inline_embeds)
      items.push_back({e.number, nullptr, e.type});
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.number < b.number; });
    for (const Item& item : items) {
      if (item.embed != nullptr) {
        Writer sub;
        CONVERGE_RETURN_IF_ERROR(EncodeMessage(obj, *item.embed, sub, depth + 1));
        if (!sub.buf().empty() || opts_.write_empty_fields) w.Bytes(item.number, sub.buf());
        continue;
      }
      const FieldSchema& f = *item.field;
      const json::value* v = obj.if_contains(f.name);
      if (v == nullptr || v->is_null()) {
        if (opts_.write_empty_fields && !f.nullable_scalar && !f.repeated && !f.is_map &&
            f.value.kind != ValueKind::kAny) {
          CONVERGE_RETURN_IF_ERROR(EncodeZero(f.number, f.value, w, depth));
        }
        continue;
      }
      if (f.is_map) {
        if (!v->is_object()) return TypeError(f, "an object");
        std::vector<std::string_view> keys;
        for (const auto& kv : v->get_object()) keys.push_back(kv.key());
        std::sort(keys.begin(), keys.end());  // Go sorts map keys
        for (std::string_view k : keys) {
          Writer entry;
          entry.Bytes(1, k);
          CONVERGE_RETURN_IF_ERROR(EncodeValue(2, f, f.value, v->get_object().at(k), entry, depth));
          w.Bytes(f.number, entry.buf());
        }
      } else if (f.repeated) {
        if (!v->is_array()) return TypeError(f, "an array");
        for (const json::value& e : v->get_array()) {
          CONVERGE_RETURN_IF_ERROR(EncodeValue(f.number, f, f.value, e, w, depth));
        }
      } else {
        CONVERGE_RETURN_IF_ERROR(EncodeValue(f.number, f, f.value, *v, w, depth));
      }
    }
    return Status::Ok();
  }

 private:
  static Status TypeError(const FieldSchema& f, std::string_view want) {
    return InvalidArgument("protobuf: field " + f.name + " must be " + std::string(want));
  }

  static std::optional<int64_t> AsInt(const json::value& v) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
      return static_cast<int64_t>(v.get_uint64());
    }
    if (v.is_double() && std::trunc(v.get_double()) == v.get_double() &&
        std::abs(v.get_double()) < 9.2e18) {
      return static_cast<int64_t>(v.get_double());
    }
    return std::nullopt;
  }

  // What Go writes for an unset non-pointer field.
  Status EncodeZero(int number, const ValueType& vt, Writer& w, int depth) {
    switch (vt.kind) {
      case ValueKind::kString:
      case ValueKind::kBytes: w.Bytes(number, ""); return Status::Ok();
      case ValueKind::kBool:
      case ValueKind::kInt32:
      case ValueKind::kInt64: w.VarintField(number, 0); return Status::Ok();
      case ValueKind::kFloat: w.Fixed(number, 4, 0); return Status::Ok();
      case ValueKind::kDouble: w.Fixed(number, 8, 0); return Status::Ok();
      case ValueKind::kAny: return Status::Ok();
      case ValueKind::kMessage: break;
    }
    Writer sub;
    switch (vt.message->special) {
      case SpecialType::kNone:
        CONVERGE_RETURN_IF_ERROR(EncodeMessage(json::object(), *vt.message, sub, depth + 1));
        break;
      case SpecialType::kQuantity: sub.Bytes(1, "0"); break;
      case SpecialType::kIntOrString:
        sub.VarintField(1, 0);
        sub.VarintField(2, 0);
        sub.Bytes(3, "");
        break;
      case SpecialType::kDuration: sub.VarintField(1, 0); break;
      default: break;  // zero Time, RawExtension, FieldsV1: an empty message
    }
    w.Bytes(number, sub.buf());
    return Status::Ok();
  }

  Status EncodeValue(int number, const FieldSchema& f, const ValueType& vt, const json::value& v,
                     Writer& w, int depth) {
    // A null list element or map value (a zero Time in map[string]Time marshals as null).
    if (v.is_null() && vt.kind == ValueKind::kMessage) return EncodeZero(number, vt, w, depth);
    switch (vt.kind) {
      case ValueKind::kString:
        if (!v.is_string()) return TypeError(f, "a string");
        w.Bytes(number, v.get_string());
        return Status::Ok();
      case ValueKind::kBytes: {
        if (!v.is_string()) return TypeError(f, "a base64 string");
        auto raw = Base64Decode(v.get_string());
        if (!raw) return TypeError(f, "valid base64");
        w.Bytes(number, *raw);
        return Status::Ok();
      }
      case ValueKind::kBool:
        if (!v.is_bool()) return TypeError(f, "a boolean");
        w.VarintField(number, v.get_bool() ? 1 : 0);
        return Status::Ok();
      case ValueKind::kInt32:
      case ValueKind::kInt64: {
        auto i = AsInt(v);
        if (!i || (vt.kind == ValueKind::kInt32 && (*i < INT32_MIN || *i > INT32_MAX))) {
          return TypeError(f, vt.kind == ValueKind::kInt32 ? "an int32" : "an int64");
        }
        w.VarintField(number, static_cast<uint64_t>(*i));
        return Status::Ok();
      }
      case ValueKind::kFloat:
      case ValueKind::kDouble: {
        if (!v.is_number()) return TypeError(f, "a number");
        double d = v.to_number<double>();
        if (vt.kind == ValueKind::kFloat) {
          float fl = static_cast<float>(d);
          uint32_t bits;
          std::memcpy(&bits, &fl, sizeof bits);
          w.Fixed(number, 4, bits);
        } else {
          uint64_t bits;
          std::memcpy(&bits, &d, sizeof bits);
          w.Fixed(number, 8, bits);
        }
        return Status::Ok();
      }
      case ValueKind::kAny:
        return InvalidArgument("protobuf: field " + f.name + " holds arbitrary JSON");
      case ValueKind::kMessage: break;
    }
    Writer sub;
    if (vt.message->special == SpecialType::kNone) {
      if (!v.is_object()) return TypeError(f, "an object");
      CONVERGE_RETURN_IF_ERROR(EncodeMessage(v.get_object(), *vt.message, sub, depth + 1));
    } else {
      CONVERGE_RETURN_IF_ERROR(EncodeSpecial(f, vt.message->special, v, sub));
    }
    w.Bytes(number, sub.buf());
    return Status::Ok();
  }

  Status EncodeSpecial(const FieldSchema& f, SpecialType special, const json::value& v, Writer& w) {
    switch (special) {
      case SpecialType::kTime:
      case SpecialType::kMicroTime: {
        if (!v.is_string()) return TypeError(f, "an RFC 3339 time");
        auto t = ParseTime(v.get_string());
        if (!t) return TypeError(f, "an RFC 3339 time");
        w.VarintField(1, static_cast<uint64_t>(t->seconds));
        int32_t nanos = special == SpecialType::kMicroTime ? t->nanos / 1000 * 1000 : 0;
        if (nanos != 0 || opts_.write_empty_fields) w.VarintField(2, static_cast<uint64_t>(nanos));
        return Status::Ok();
      }
      case SpecialType::kDuration: {
        auto d = v.is_string() ? ParseDuration(v.get_string()) : std::nullopt;
        if (!d) return TypeError(f, "a duration");
        w.VarintField(1, static_cast<uint64_t>(*d));
        return Status::Ok();
      }
      case SpecialType::kQuantity:
        if (v.is_string()) {
          w.Bytes(1, v.get_string());
        } else if (v.is_number()) {
          w.Bytes(1, json::serialize(v));
        } else {
          return TypeError(f, "a quantity");
        }
        return Status::Ok();
      case SpecialType::kIntOrString:
        if (v.is_string()) {
          w.VarintField(1, 1);
          if (opts_.write_empty_fields) w.VarintField(2, 0);
          w.Bytes(3, v.get_string());
        } else if (auto i = AsInt(v); i && *i >= INT32_MIN && *i <= INT32_MAX) {
          w.VarintField(1, 0);
          w.VarintField(2, static_cast<uint64_t>(*i));
          if (opts_.write_empty_fields) w.Bytes(3, "");
        } else {
          return TypeError(f, "an int32 or a string");
        }
        return Status::Ok();
      case SpecialType::kRawExtension: w.Bytes(1, json::serialize(v)); return Status::Ok();
      case SpecialType::kFieldsV1:
        if (!v.is_object()) return TypeError(f, "an object");
        w.Bytes(1, json::serialize(v));
        return Status::Ok();
      case SpecialType::kStringList:
        if (!v.is_array()) return TypeError(f, "an array of strings");
        for (const json::value& s : v.get_array()) {
          if (!s.is_string()) return TypeError(f, "an array of strings");
          w.Bytes(1, s.get_string());
        }
        return Status::Ok();
      case SpecialType::kNone: break;
    }
    return InvalidArgument("protobuf: unsupported special type");
  }

  const ProtobufEncodeOptions& opts_;
};

}  // namespace

StatusOr<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body) {
  if (!body.starts_with(kProtobufMagic)) {
    return InvalidArgument("protobuf: the body does not start with the \"k8s\\x00\" prefix");
  }
  Reader r(body.substr(kProtobufMagic.size()));
  ProtobufEnvelope env;
  auto bad = [] {
    return InvalidArgument("protobuf: the envelope (runtime.Unknown) is malformed");
  };
  while (!r.done()) {
    int number, wt;
    if (!ReadTag(r, &number, &wt)) return bad();
    if (wt != kLengthDelimited || number > 4) {
      if (!r.Skip(wt)) return bad();
      continue;
    }
    std::string_view v;
    if (!r.ReadLengthDelimited(&v)) return bad();
    switch (number) {
      case 1: {
        Reader tr(v);
        while (!tr.done()) {
          int n2, wt2;
          if (!ReadTag(tr, &n2, &wt2)) return bad();
          std::string_view s;
          if (wt2 == kLengthDelimited && (n2 == 1 || n2 == 2)) {
            if (!tr.ReadLengthDelimited(&s)) return bad();
            (n2 == 1 ? env.api_version : env.kind) = std::string(s);
          } else if (!tr.Skip(wt2)) {
            return bad();
          }
        }
        break;
      }
      case 2: env.raw = v; break;
      case 3: env.content_encoding = std::string(v); break;
      case 4: env.content_type = std::string(v); break;
    }
  }
  return env;
}

StatusOr<json::object> DecodeProtobufMessage(std::string_view bytes, const TypeSchema& type,
                                             const ProtobufLimits& limits) {
  Decoder d(limits);
  json::object out;
  CONVERGE_RETURN_IF_ERROR(d.DecodeInto(bytes, type, out, 1));
  return out;
}

StatusOr<json::object> DecodeProtobufObject(std::string_view body, const KindTypeResolver& types,
                                            const ProtobufLimits& limits) {
  CONVERGE_ASSIGN_OR_RETURN(ProtobufEnvelope env, ParseProtobufEnvelope(body));
  if (!env.content_encoding.empty()) {
    return InvalidArgument("protobuf: unsupported contentEncoding \"" + env.content_encoding +
                           "\"");
  }
  if (!env.content_type.empty() && env.content_type != kProtobufContentType) {
    return InvalidArgument("protobuf: unsupported contentType \"" + env.content_type + "\"");
  }
  if (env.kind.empty()) return InvalidArgument("Object 'Kind' is missing in protobuf body");
  GroupVersion gv = GroupVersion::Parse(env.api_version);
  const TypeSchema* type = types ? types({gv.group, gv.version, env.kind}) : nullptr;
  if (type == nullptr) {
    return InvalidArgument("no kind \"" + env.kind + "\" is registered for version \"" +
                           env.api_version + "\"");
  }
  json::object out;
  out["apiVersion"] = env.api_version;
  out["kind"] = env.kind;
  Decoder d(limits);
  CONVERGE_RETURN_IF_ERROR(d.DecodeInto(env.raw, *type, out, 1));
  return out;
}

StatusOr<json::object> DecodeProtobufObject(std::string_view body) {
  return DecodeProtobufObject(body, &BuiltinTypeForKind);
}

StatusOr<std::string> EncodeProtobufMessage(const json::object& obj, const TypeSchema& type,
                                            const ProtobufEncodeOptions& options) {
  Encoder e(options);
  Writer w;
  CONVERGE_RETURN_IF_ERROR(e.EncodeMessage(obj, type, w, 1));
  return std::move(w.buf());
}

StatusOr<std::string> EncodeProtobufObject(const json::object& obj, const TypeSchema& type,
                                           const ProtobufEncodeOptions& options) {
  CONVERGE_ASSIGN_OR_RETURN(std::string raw, EncodeProtobufMessage(obj, type, options));
  Writer type_meta;
  auto str = [&](std::string_view key) -> std::string_view {
    const json::value* v = obj.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
  };
  type_meta.Bytes(1, str("apiVersion"));
  type_meta.Bytes(2, str("kind"));
  Writer unknown;
  unknown.Bytes(1, type_meta.buf());
  unknown.Bytes(2, raw);
  if (options.write_empty_fields) {
    unknown.Bytes(3, "");
    unknown.Bytes(4, "");
  }
  return std::string(kProtobufMagic) + unknown.buf();
}

}  // namespace converge::api
