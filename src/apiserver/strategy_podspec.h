// PodSpec and PodTemplateSpec defaulting and validation, shared by pods and every workload kind
// that embeds a pod template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob).
//
// Upstream: pkg/apis/core/v1/defaults.go (SetDefaults_PodSpec, SetDefaults_Pod,
// SetDefaults_Container, SetDefaults_Probe, SetDefaults_Volume, ...) and
// pkg/apis/core/validation/validation.go (ValidatePodSpec, ValidatePodTemplateSpec).
//
// Pure functions; thread-safe.
#pragma once

#include <boost/json.hpp>

#include <string>

#include "apiserver/strategy_util.h"

namespace converge::apiserver {

// Defaults a PodSpec in place. `for_pod` adds what upstream applies to Pods only
// (SetDefaults_Pod): requests default to limits, enableServiceLinks, hostNetwork host ports.
void DefaultPodSpec(boost::json::object& spec, bool for_pod);
// Defaults `obj[key]` when it is a pod template ({metadata, spec}); creates nothing.
void DefaultPodTemplateAt(boost::json::object& obj, std::string_view key);

// ValidatePodSpec; `path` is the spec's field path ("spec", "spec.template.spec").
// `for_pod` adds the Pod-only checks (validateContainersOnlyForPod, hostNetwork ports).
sv::Causes ValidatePodSpec(const boost::json::object& spec, const std::string& path, bool for_pod);
// ValidatePodTemplateSpec: labels, annotations, the spec; ephemeral containers are forbidden.
sv::Causes ValidatePodTemplateSpec(const boost::json::value* tmpl, const std::string& path);

// The pod's QoS class (Guaranteed, Burstable or BestEffort), as qos.ComputePodQOS.
std::string ComputeQosClass(const boost::json::object& spec);

// The image pull policy SetDefaults_Container picks for an image reference: Always for
// `:latest` or no tag (and no digest), IfNotPresent otherwise.
std::string DefaultPullPolicy(std::string_view image);

}  // namespace converge::apiserver
