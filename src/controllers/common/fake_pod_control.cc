#include "controllers/common/fake_pod_control.h"

namespace converge::controllers {

util::Status FakePodControl::CreatePod(std::string_view ns, const boost::json::object& pod_template,
                                       const api::Object& owner, const OwnerRef& controller_ref,
                                       std::string_view generate_name) {
  std::function<void()> on_create;
  {
    std::lock_guard lock(mu_);
    ++create_attempts_;
    if (!create_error_.ok()) return create_error_;
    if (create_limit_ >= 0 && static_cast<int>(created_.size()) >= create_limit_) {
      return util::ResourceExhausted("FakePodControl: create limit reached");
    }
    api::Object pod = PodFromTemplate(pod_template, owner, controller_ref, generate_name);
    pod.set_namespace(ns);
    pod.set_name(std::string(pod.generate_name()) + std::to_string(created_.size()));
    created_.push_back(std::move(pod));
    refs_.push_back(controller_ref);
    on_create = on_create_;
  }
  if (on_create) on_create();
  return util::Status();
}

util::Status FakePodControl::DeletePod(std::string_view ns, std::string_view name,
                                       const api::Object&) {
  std::lock_guard lock(mu_);
  if (!delete_error_.ok()) return delete_error_;
  deleted_.push_back({std::string(ns), std::string(name)});
  return util::Status();
}

util::Status FakePodControl::PatchPod(std::string_view ns, std::string_view name,
                                      std::string_view patch) {
  std::lock_guard lock(mu_);
  if (!patch_error_.ok()) return patch_error_;
  patched_.push_back({std::string(ns), std::string(name), std::string(patch)});
  return util::Status();
}

void FakePodControl::set_create_error(util::Status s) {
  std::lock_guard lock(mu_);
  create_error_ = std::move(s);
}
void FakePodControl::set_create_limit(int limit) {
  std::lock_guard lock(mu_);
  create_limit_ = limit;
}
void FakePodControl::set_on_create(std::function<void()> f) {
  std::lock_guard lock(mu_);
  on_create_ = std::move(f);
}
void FakePodControl::set_delete_error(util::Status s) {
  std::lock_guard lock(mu_);
  delete_error_ = std::move(s);
}
void FakePodControl::set_patch_error(util::Status s) {
  std::lock_guard lock(mu_);
  patch_error_ = std::move(s);
}

std::vector<api::Object> FakePodControl::created() const {
  std::lock_guard lock(mu_);
  return created_;
}
int FakePodControl::create_attempts() const {
  std::lock_guard lock(mu_);
  return create_attempts_;
}
std::vector<FakePodControl::Delete> FakePodControl::deleted() const {
  std::lock_guard lock(mu_);
  return deleted_;
}
std::vector<FakePodControl::Patch> FakePodControl::patched() const {
  std::lock_guard lock(mu_);
  return patched_;
}
std::vector<OwnerRef> FakePodControl::controller_refs() const {
  std::lock_guard lock(mu_);
  return refs_;
}
void FakePodControl::Clear() {
  std::lock_guard lock(mu_);
  create_attempts_ = 0;
  created_.clear();
  refs_.clear();
  deleted_.clear();
  patched_.clear();
}

}  // namespace converge::controllers
