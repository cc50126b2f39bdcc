// FakePodControl: a recording PodControl for tests (upstream's FakePodControl). Every call is
// recorded; creates build the pod exactly as RealPodControl would send it (PodFromTemplate) and
// give it a name "<generateName><n>". Failures are injected with `create_error` (every create
// fails), `create_limit` (creates beyond the limit fail with ResourceExhausted), `delete_error`
// and `patch_error`.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "controllers/common/pod_control.h"

namespace converge::controllers {

class FakePodControl final : public PodControl {
 public:
  struct Delete {
    std::string ns;
    std::string name;
  };
  struct Patch {
    std::string ns;
    std::string name;
    std::string patch;
  };

  util::Status CreatePod(std::string_view ns, const boost::json::object& pod_template,
                         const api::Object& owner, const OwnerRef& controller_ref,
                         std::string_view generate_name = {}) override;
  util::Status DeletePod(std::string_view ns, std::string_view name,
                         const api::Object& owner) override;
  util::Status PatchPod(std::string_view ns, std::string_view name,
                        std::string_view patch) override;

  // Injection (set before use, or under the test's own synchronization).
  void set_create_error(util::Status s);
  void set_create_limit(int limit);  // -1: unlimited
  void set_delete_error(util::Status s);
  void set_patch_error(util::Status s);
  // Called (outside the fake's lock) after each successful create.
  void set_on_create(std::function<void()> f);

  // Successful creates (the pods as sent, named), attempted creates, deletes and patches.
  std::vector<api::Object> created() const;
  int create_attempts() const;
  std::vector<Delete> deleted() const;
  std::vector<Patch> patched() const;
  // Controller references used for creates.
  std::vector<OwnerRef> controller_refs() const;
  void Clear();

 private:
  mutable std::mutex mu_;
  util::Status create_error_;         // guarded by mu_
  int create_limit_ = -1;             // guarded by mu_
  util::Status delete_error_;         // guarded by mu_
  util::Status patch_error_;          // guarded by mu_
  int create_attempts_ = 0;           // guarded by mu_
  std::vector<api::Object> created_;  // guarded by mu_
  std::vector<OwnerRef> refs_;        // guarded by mu_
  std::vector<Delete> deleted_;       // guarded by mu_
  std::vector<Patch> patched_;        // guarded by mu_
  std::function<void()> on_create_;   // guarded by mu_
};

}  // namespace converge::controllers
