// Prometheus metrics: counters, gauges and histograms with labels, and the text exposition writer.
//
// A metric is declared once, by name, in a Registry; the declaration returns its family. A family
// has one child per combination of label values. Children are created on first use and live as
// long as the registry, so hot paths look a child up once and keep the reference:
//
//   util::CounterFamily& requests = util::DefaultRegistry().AddCounter(
//       {.name = "apiserver_request_total", .help = "Requests served.", .labels = {"verb",
//       "code"}});
//   util::Counter& get_ok = requests.WithLabelValues({"GET", "200"});
//   get_ok.Inc();  // one relaxed atomic add
//
// Registry::Render() writes the Prometheus text exposition format, version 0.0.4
// (kPrometheusContentType): families sorted by name, children sorted by label values, HELP and TYPE
// lines, label values escaped, histograms as cumulative `_bucket{le="..."}` lines then `_sum` and
// `_count`. A family with label names renders nothing until its first child exists; a family
// without label names has its single child from the start and always renders.
//
// Values that change with time rather than with events (for example "seconds of work in
// progress") are set by collect hooks, which Render runs first (Registry::AddCollectHook).
//
// Declaring a name twice with an identical definition returns the existing family (so independent
// components, e.g. every named work queue, can declare what they use); a conflicting definition or
// an invalid metric or label name is a programming error and aborts.
//
// Thread-safety: everything here is safe to use concurrently. Updating a child is lock-free
// (relaxed atomics). WithLabelValues takes the family's lock in shared mode, and exclusively only
// to create a child. Render takes the registry lock, then each family's lock in shared mode (that
// is the lock order). A histogram rendered while being observed may show an observation in `_sum`
// and not yet in its bucket (or the reverse); `_count` always equals the `+Inf` bucket.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace converge::util {

// The Content-Type of Registry::Render()'s output.
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// A monotonically increasing value (requests served, items added). Starts at 0.
class Counter {
 public:
  void Inc() { value_.fetch_add(1, std::memory_order_relaxed); }
  // Adds v, which must be >= 0 (a negative v is a programming error and aborts).
  void Add(double v);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down (queue depth, seconds of unfinished work). Starts at 0.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void Sub(double v) { Add(-v); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into buckets with fixed upper bounds (inclusive: an observation v lands in
// the first bucket whose bound is >= v; NaN and values above the last bound land in `+Inf`).
class Histogram {
 public:
  // `bounds` (strictly increasing, without +Inf) must outlive the histogram; families own them.
  explicit Histogram(const std::vector<double>* bounds);

  void Observe(double v);

  // Cumulative count per bound, followed by the +Inf bucket (== Count()).
  std::vector<uint64_t> CumulativeCounts() const;
  uint64_t Count() const;
  double Sum() const { return sum_.load(std::memory_order_relaxed); }
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  const std::vector<double>* const bounds_;
  // Per-bucket (non-cumulative) counts; bounds_->size() + 1 entries, the last one for +Inf.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// Prometheus' default buckets, suited to request latencies in seconds: 5 ms to 10 s.
std::vector<double> DefaultLatencyBuckets();
// `count` bounds: start, start*factor, start*factor², ... (start > 0, factor > 1, count >= 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// `count` bounds: start, start+width, ... (width > 0, count >= 1).
std::vector<double> LinearBuckets(double start, double width, int count);

struct MetricOptions {
  // [a-zA-Z_:][a-zA-Z0-9_:]*, e.g. "workqueue_adds_total".
  std::string name;
  // One line for humans; backslashes and newlines are escaped on output.
  std::string help;
  // Label names, in the order WithLabelValues takes their values. [a-zA-Z_][a-zA-Z0-9_]*, not
  // starting with "__", no duplicates; histograms may not use "le".
  std::vector<std::string> labels;
};

struct HistogramOptions {
  std::string name;
  std::string help;
  std::vector<std::string> labels;
  // Upper bounds, strictly increasing; +Inf is implicit (a trailing +Inf is accepted and dropped).
  std::vector<double> buckets = DefaultLatencyBuckets();
};

enum class MetricType { kCounter, kGauge, kHistogram };

namespace metrics_internal {

// What the registry needs from a family of any type.
class FamilyBase {
 public:
  FamilyBase(MetricType type, std::string name, std::string help, std::vector<std::string> labels);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  MetricType type() const { return type_; }
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends this family's exposition text (nothing for a labelled family without children).
  virtual void RenderTo(std::string* out) const = 0;

 protected:
  // Appends the HELP and TYPE lines.
  void RenderHeaderTo(std::string* out) const;
  // `a="x",b="y"` for these values (escaped), without braces.
  std::string FormatLabels(std::span<const std::string_view> values) const;

 private:
  const MetricType type_;
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
};

// Orders label-value tuples, and compares them with lookup keys without allocating.
struct LabelValuesLess {
  using is_transparent = void;
  bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const;
  bool operator()(const std::vector<std::string>& a, std::span<const std::string_view> b) const;
  bool operator()(std::span<const std::string_view> a, const std::vector<std::string>& b) const;
};

}  // namespace metrics_internal

// All children of one metric name. M is Counter, Gauge or Histogram.
template <typename M>
class Family final : public metrics_internal::FamilyBase {
 public:
  // Use Registry::AddCounter/AddGauge/AddHistogram.
  Family(MetricType type, std::string name, std::string help, std::vector<std::string> labels,
         std::vector<double> bounds);

  // The child for these label values, one per label name in declaration order; created on first
  // use. A wrong number of values is a programming error and aborts. The reference stays valid
  // for the registry's lifetime.
  M& WithLabelValues(std::initializer_list<std::string_view> values) {
    return WithLabelValues(std::span<const std::string_view>(values.begin(), values.size()));
  }
  M& WithLabelValues(std::span<const std::string_view> values);

  // The histogram bounds (empty for counters and gauges).
  const std::vector<double>& bounds() const { return bounds_; }

  void RenderTo(std::string* out) const override;

 private:
  struct Child {
    Child(std::string l, const std::vector<double>* bounds)
        : labels(std::move(l)), metric(MakeMetric(bounds)) {}
    static M MakeMetric(const std::vector<double>* bounds);
    const std::string labels;  // rendered, escaped, without braces; "" without label names
    M metric;
  };

  // Constant after construction; children point into it.
  const std::vector<double> bounds_;
  // Histograms only: bounds_ rendered for `le`, then "+Inf".
  const std::vector<std::string> le_strings_;

  mutable std::shared_mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Child>, metrics_internal::LabelValuesLess>
      children_;  // guarded by mu_; never erased, so Child addresses are stable
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// Keeps a collect hook registered; destroying it (or Reset) unregisters the hook and waits for a
// running call to finish, so the hook may use state owned alongside the handle. Move-only.
class CollectHook {
 public:
  CollectHook() = default;
  CollectHook(CollectHook&& other) noexcept = default;
  CollectHook& operator=(CollectHook&& other) noexcept;
  ~CollectHook() { Reset(); }

  // After Reset returns, the hook is not running and never runs again.
  void Reset();

 private:
  friend class Registry;
  struct Entry {
    std::mutex mu;
    std::function<void()> fn;  // guarded by mu; empty once reset
  };
  explicit CollectHook(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}
  std::shared_ptr<Entry> entry_;
};

// Owns metric families and renders them. Use DefaultRegistry() in production code and a private
// Registry in tests. Families and children live as long as the registry, which must outlive
// everything that holds references into it.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  CounterFamily& AddCounter(MetricOptions options);
  GaugeFamily& AddGauge(MetricOptions options);
  HistogramFamily& AddHistogram(HistogramOptions options);

  // Registers fn to run at the start of every Render, outside the registry's locks, typically to
  // set gauges computed from time. fn must not call Render or reset its own handle. Hooks run on
  // the rendering thread, one at a time per hook. The registry does not need to outlive the handle.
  [[nodiscard]] CollectHook AddCollectHook(std::function<void()> fn);

  // The whole exposition text. Runs the collect hooks first.
  std::string Render() const;
  // Appends the exposition text to *out. Runs the collect hooks first.
  void RenderTo(std::string* out) const;

 private:
  metrics_internal::FamilyBase& AddFamily(MetricType type, std::string name, std::string help,
                                          std::vector<std::string> labels,
                                          std::vector<double> bounds);
  void RunCollectHooks() const;

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<metrics_internal::FamilyBase>, std::less<>>
      families_;                                                  // guarded by mu_
  mutable std::vector<std::weak_ptr<CollectHook::Entry>> hooks_;  // guarded by mu_
  // Size of the last rendering, to reserve the next one in one allocation.
  mutable std::atomic<size_t> last_render_size_{0};
};

// The process-wide registry that /metrics serves. Never destroyed.
Registry& DefaultRegistry();

}  // namespace converge::util
