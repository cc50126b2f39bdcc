#include "controllers/common/conditions.h"

#include <algorithm>

#include "api/object.h"

namespace converge::controllers {

namespace json = boost::json;

json::object Condition::ToJson() const {
  json::object o;
  o["type"] = type;
  o["status"] = status;
  if (!last_update_time.empty()) o["lastUpdateTime"] = last_update_time;
  if (!last_transition_time.empty()) o["lastTransitionTime"] = last_transition_time;
  if (!reason.empty()) o["reason"] = reason;
  if (!message.empty()) o["message"] = message;
  return o;
}

Condition Condition::FromJson(api::ObjectView o) {
  Condition c;
  c.type = api::Object::GetString(o, "type");
  c.status = api::Object::GetString(o, "status");
  c.last_update_time = api::Object::GetString(o, "lastUpdateTime");
  c.last_transition_time = api::Object::GetString(o, "lastTransitionTime");
  c.reason = api::Object::GetString(o, "reason");
  c.message = api::Object::GetString(o, "message");
  return c;
}

std::vector<Condition> ParseConditions(api::ArrayView conditions) {
  std::vector<Condition> out;
  for (const api::View v : conditions) {
    if (v.is_object()) out.push_back(Condition::FromJson(v.as_object()));
  }
  return out;
}

json::array ConditionsToJson(const std::vector<Condition>& conditions) {
  json::array out;
  for (const Condition& c : conditions) out.push_back(c.ToJson());
  return out;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void RemoveCondition(std::vector<Condition>& conditions, std::string_view type) {
  conditions.erase(std::remove_if(conditions.begin(), conditions.end(),
                                  [type](const Condition& c) { return c.type == type; }),
                   conditions.end());
}

}  // namespace converge::controllers
