// core/v1 ConfigMap and Secret strategies (keys, the 1 MiB limit, immutability, stringData).
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"
#include "util/base64.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::CopyField;
using sv::Get;
using sv::Index;
using sv::Key;
using sv::Spec;
using sv::Status;
using sv::Truthy;

namespace {

std::optional<size_t> Base64DecodedSize(std::string_view in) {
  std::optional<std::string> d = util::Base64Decode(in);
  if (!d) return std::nullopt;
  return d->size();
}

// ---------------------------------------------------------------------------------------------
// ConfigMaps and Secrets

constexpr size_t kMaxSecretSize = 1024 * 1024;

class ConfigMapStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    size_t total = 0;
    const json::object* data = AsObject(Get(obj, "data"));
    const json::object* binary = AsObject(Get(obj, "binaryData"));
    for (const auto& [key, value] : data ? *data : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("data", key), key, m));
      }
      if (binary && binary->contains(key)) {
        out.push_back(
            FieldInvalidString(Key("data", key), key, "duplicate of key present in binaryData"));
      }
      total += AsString(&value).size();
    }
    for (const auto& [key, value] : binary ? *binary : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("binaryData", key), key, m));
      }
      total += Base64DecodedSize(AsString(&value)).value_or(AsString(&value).size());
    }
    if (total > kMaxSecretSize) out.push_back(FieldTooLong("", kMaxSecretSize));
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    if (Truthy(Get(old, "immutable"))) {
      if (!Truthy(Get(obj, "immutable"))) {
        out.push_back(FieldForbidden("immutable", "field is immutable when `immutable` is set"));
      }
      for (std::string_view f : {"data", "binaryData"}) {
        const json::object* a = AsObject(Get(obj, f));
        const json::object* b = AsObject(Get(old, f));
        bool same = (a ? *a : json::object()) == (b ? *b : json::object());
        if (!same) {
          out.push_back(
              FieldForbidden(std::string(f), "field is immutable when `immutable` is set"));
        }
      }
    }
    sv::Append(out, Validate(obj));
    return out;
  }
};

class SecretStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // Type Opaque; stringData is merged into data (base64) and dropped, as the v1 conversion does.
  void Default(api::Object& obj) const override {
    json::object& doc = obj.mutable_doc();
    if (api::Object::GetString(doc, "type").empty()) doc["type"] = "Opaque";
    if (const json::object* sd = AsObject(Get(doc, "stringData"))) {
      json::object& data = api::EnsureObject(doc, "data");
      for (const auto& [k, v] : *sd) data[k] = util::Base64Encode(AsString(&v));
    }
    doc.erase("stringData");
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::object* data = AsObject(Get(obj, "data"));
    size_t total = 0;
    for (const auto& [key, value] : data ? *data : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("data", key), key, m));
      }
      std::optional<size_t> n = Base64DecodedSize(AsString(&value));
      if (!n) {
        out.push_back(FieldInvalidString(Key("data", key), "<secret contents redacted>",
                                         "illegal base64 data"));
      }
      total += n.value_or(0);
    }
    if (total > kMaxSecretSize) out.push_back(FieldTooLong("data", kMaxSecretSize));
    std::string_view type = api::Object::GetString(obj.doc(), "type");
    auto has = [&](std::string_view k) { return data && data->contains(k); };
    if (type == "kubernetes.io/service-account-token") {
      if (!obj.annotation("kubernetes.io/service-account.name").value_or("").size()) {
        out.push_back(FieldRequired("metadata.annotations[kubernetes.io/service-account.name]"));
      }
    } else if (type == "kubernetes.io/dockercfg") {
      if (!has(".dockercfg")) out.push_back(FieldRequired("data[.dockercfg]"));
    } else if (type == "kubernetes.io/dockerconfigjson") {
      if (!has(".dockerconfigjson")) out.push_back(FieldRequired("data[.dockerconfigjson]"));
    } else if (type == "kubernetes.io/basic-auth") {
      if (!has("username") && !has("password")) {
        out.push_back(FieldRequired("data[username]"));
        out.push_back(FieldRequired("data[password]"));
      }
    } else if (type == "kubernetes.io/ssh-auth") {
      if (AsString(data ? Get(*data, "ssh-privatekey") : nullptr).empty()) {
        out.push_back(FieldRequired("data[ssh-privatekey]"));
      }
    } else if (type == "kubernetes.io/tls") {
      if (!has("tls.crt")) out.push_back(FieldRequired("data[tls.crt]"));
      if (!has("tls.key")) out.push_back(FieldRequired("data[tls.key]"));
    }
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    std::string_view type = api::Object::GetString(obj.doc(), "type");
    if (type != api::Object::GetString(old.doc(), "type")) {
      out.push_back(FieldInvalidString("type", type, "field is immutable"));
    }
    if (Truthy(Get(old, "immutable"))) {
      if (!Truthy(Get(obj, "immutable"))) {
        out.push_back(FieldForbidden("immutable", "field is immutable when `immutable` is set"));
      }
      const json::object* a = AsObject(Get(obj, "data"));
      const json::object* b = AsObject(Get(old, "data"));
      if ((a ? *a : json::object()) != (b ? *b : json::object())) {
        out.push_back(FieldForbidden("data", "field is immutable when `immutable` is set"));
      }
    }
    sv::Append(out, Validate(obj));
    return out;
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeCoreConfigStrategy(ResourceInfoPtr info) {
  if (!info->gvr.group.empty()) return nullptr;
  if (info->gvr.resource == "configmaps")
    return std::make_shared<ConfigMapStrategy>(std::move(info));
  if (info->gvr.resource == "secrets") return std::make_shared<SecretStrategy>(std::move(info));
  return nullptr;
}

}  // namespace converge::apiserver
