#include "kubelet/image_registry.h"

#include <gtest/gtest.h>

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;

TEST(ImageRegistryTest, NormalizesLikeContainerd) {
  struct Case {
    std::string image;
    std::string normalized;
  };
  for (const Case& c : std::vector<Case>{
           {"nginx", "docker.io/library/nginx:latest"},
           {"nginx:1.27", "docker.io/library/nginx:1.27"},
           {"bitnami/redis:7", "docker.io/bitnami/redis:7"},
           {"registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"},
           {"localhost:5000/app", "localhost:5000/app:latest"},
           {"ghcr.io/org/sub/app:v1.2-rc.1", "ghcr.io/org/sub/app:v1.2-rc.1"},
           {"busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "docker.io/library/busybox@sha256:"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
       }) {
    auto ref = ParseImageReference(c.image);
    ASSERT_TRUE(ref.ok()) << c.image << ": " << ref.status().ToString();
    EXPECT_EQ(ref->normalized, c.normalized) << c.image;
  }
}

TEST(ImageRegistryTest, RejectsMalformedReferences) {
  struct Case {
    std::string image;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"", "invalid reference format"},
           {"nginx:", "invalid reference format"},
           {"nginx::1", "invalid reference format"},
           {"-nginx", "invalid reference format"},
           {"nginx@sha256:abc", "invalid reference format"},
           {"Nginx", "invalid reference format: repository name (library/Nginx) must be lowercase"},
           {"docker.io/Org/app",
            "invalid reference format: repository name (Org/app) must be "
            "lowercase"},
       }) {
    auto ref = ParseImageReference(c.image);
    ASSERT_FALSE(ref.ok()) << c.image;
    EXPECT_EQ(ref.status().message(), c.error) << c.image;
  }
}

TEST(ImageRegistryTest, TheMissingSet) {
  struct Case {
    std::string image;
    bool exists;
  };
  for (const Case& c : std::vector<Case>{{"nginx:1.27", true},
                                         {"nginx:doesnotexist", false},
                                         {"example.com/doesnotexist/app:1", false},
                                         {"nginx:DoesNotExist", false},
                                         {"missing.example/app:1", false},
                                         {"registry.invalid/app:1", false},
                                         {"invalid.example/app:1", true}}) {
    auto ref = ParseImageReference(c.image);
    ASSERT_TRUE(ref.ok()) << c.image;
    std::string error;
    EXPECT_EQ(ImageExists(*ref, &error), c.exists) << c.image;
    EXPECT_EQ(error.empty(), c.exists) << c.image;
  }
}

TEST(ImageRegistryTest, IdentitiesAreStable) {
  auto a = ParseImageReference("nginx:1.27");
  auto b = ParseImageReference("docker.io/library/nginx:1.27");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ImageId(*a), ImageId(*b));
  EXPECT_EQ(ImageId(*a).rfind("docker.io/library/nginx@sha256:", 0), 0u);
  EXPECT_EQ(ImageId(*a).size(), std::string("docker.io/library/nginx@sha256:").size() + 64);
  EXPECT_EQ(ImageSizeBytes(*a), ImageSizeBytes(*b));
  EXPECT_NE(HexId("a"), HexId("b"));
  EXPECT_EQ(HexId("a").size(), 64u);
}

TEST(ImageRegistryTest, GoDurations) {
  EXPECT_EQ(GoDurationMillis(0ms), "0s");
  EXPECT_EQ(GoDurationMillis(250ms), "250ms");
  EXPECT_EQ(GoDurationMillis(1500ms), "1.5s");
  EXPECT_EQ(GoDurationMillis(1234567us), "1.234s");
  EXPECT_EQ(GoDurationMillis(10s), "10s");
  EXPECT_EQ(GoDurationMillis(123004ms), "2m3.004s");
  EXPECT_EQ(GoDurationMillis(3600s), "1h0m0s");
}

}  // namespace
}  // namespace converge::kubelet
