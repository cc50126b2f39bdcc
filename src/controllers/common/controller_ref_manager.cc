#include "controllers/common/controller_ref_manager.h"

#include <optional>

#include "client/api_errors.h"

namespace converge::controllers {

ClaimController ClaimController::Of(const api::Object& controller) {
  return {.uid = controller.uid(),
          .ns = controller.namespace_(),
          .being_deleted = controller.being_deleted()};
}

ClaimAction DecideClaim(const api::Object& controller, const api::Object& candidate, bool matches) {
  return DecideClaim(ClaimController::Of(controller),
                     {.object = &candidate,
                      .controller_uid = ControllerUidOf(candidate),
                      .being_deleted = candidate.being_deleted()},
                     matches);
}

ClaimAction DecideClaim(const ClaimController& controller, const ClaimCandidate& candidate,
                        bool matches) {
  if (candidate.controller_uid.has_value()) {
    if (*candidate.controller_uid != controller.uid) return ClaimAction::kIgnore;
    if (matches) return ClaimAction::kOwned;
    if (controller.being_deleted) return ClaimAction::kIgnore;
    return ClaimAction::kRelease;
  }
  if (controller.being_deleted || !matches) return ClaimAction::kIgnore;
  if (candidate.being_deleted) return ClaimAction::kIgnore;
  if (!controller.ns.empty() && controller.ns != candidate.object->namespace_()) {
    return ClaimAction::kIgnore;
  }
  return ClaimAction::kAdopt;
}

ClaimResult ClaimObjects(const ClaimOptions& o, const std::vector<api::ObjectPtr>& candidates) {
  ClaimResult result;
  std::optional<util::Status> can_adopt;  // computed once, on the first adoption
  auto note = [&result](const util::Status& s) {
    if (result.error.ok() && !s.ok()) result.error = s;
  };
  const ClaimController controller = ClaimController::Of(*o.controller);
  for (const api::ObjectPtr& obj : candidates) {
    if (obj == nullptr) continue;
    bool matches = o.selector.Matches(obj->labels());
    for (const auto& f : o.filters) matches = matches && f(*obj);
    switch (DecideClaim(controller,
                        {.object = obj.get(),
                         .controller_uid = ControllerUidOf(*obj),
                         .being_deleted = obj->being_deleted()},
                        matches)) {
      case ClaimAction::kIgnore: break;
      case ClaimAction::kOwned: result.claimed.push_back(obj); break;
      case ClaimAction::kAdopt: {
        if (!can_adopt.has_value()) can_adopt = o.can_adopt ? o.can_adopt() : util::Status();
        if (!can_adopt->ok()) {
          note(can_adopt->WithContext("can't adopt " + obj->key().ToString()));
          break;
        }
        util::Status s =
            o.patch(*obj, AdoptPatch(*obj, NewControllerRef(*o.controller, o.controller_gvk)));
        if (s.ok()) {
          result.claimed.push_back(obj);
        } else if (!client::IsNotFound(s)) {
          note(s.WithContext("adopting " + obj->key().ToString()));
        }
        break;
      }
      case ClaimAction::kRelease: {
        util::Status s = o.patch(*obj, ReleasePatch(*obj, o.controller->uid()));
        if (!s.ok() && !client::IsNotFound(s) && !client::IsInvalid(s)) {
          note(s.WithContext("releasing " + obj->key().ToString()));
        }
        break;
      }
    }
  }
  return result;
}

std::function<util::Status()> RecheckDeletionTimestamp(
    std::function<util::StatusOr<api::Object>()> get, std::string uid) {
  return [get = std::move(get), uid = std::move(uid)]() -> util::Status {
    util::StatusOr<api::Object> fresh = get();
    if (!fresh.ok()) return fresh.status();
    if (fresh->uid() != uid) {
      return util::FailedPrecondition("original " + std::string(fresh->kind()) + " " +
                                      fresh->key().ToString() + " is gone: got uid " +
                                      std::string(fresh->uid()) + ", wanted " + uid);
    }
    if (fresh->being_deleted()) {
      return util::FailedPrecondition(std::string(fresh->kind()) + " " + fresh->key().ToString() +
                                      " has just been deleted at " +
                                      std::string(fresh->deletion_timestamp()));
    }
    return util::Status();
  };
}

}  // namespace converge::controllers
