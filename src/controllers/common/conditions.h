// Status conditions as workload controllers keep them (apps/v1 DeploymentCondition and
// ReplicaSetCondition; ReplicaSet conditions have no lastUpdateTime).
//
// Times are RFC 3339 strings as stored ("" when absent), so that a condition read back from the
// server compares equal to the one written.
//
// Thread-safety: values and pure functions.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "api/json_view.h"

namespace converge::controllers {

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string last_update_time;
  std::string last_transition_time;
  std::string reason;
  std::string message;

  boost::json::object ToJson() const;
  static Condition FromJson(api::ObjectView o);
  friend bool operator==(const Condition&, const Condition&) = default;
};

std::vector<Condition> ParseConditions(api::ArrayView conditions);
boost::json::array ConditionsToJson(const std::vector<Condition>& conditions);
// The condition of `type`, or null.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);
void RemoveCondition(std::vector<Condition>& conditions, std::string_view type);

}  // namespace converge::controllers
