#include "tests/support/ptb_files.hpp"

#include <array>
#include <cstdint>
#include <fstream>
#include <string>

namespace commsgd::testing {

namespace {

struct Subject {
  const char* noun;
  const char* verb;
  const char* preposition;
};

constexpr std::array<Subject, 4> kSubjects{{{"cat", "sat", "on"},
                                            {"dog", "ran", "to"},
                                            {"bird", "flew", "over"},
                                            {"child", "slept", "under"}}};
constexpr std::array<const char*, 2> kArticles{"the", "a"};
constexpr std::array<const char*, 4> kPlaces{"mat", "tree", "house", "car"};

void write_lines(const std::filesystem::path& file, int lines, std::uint32_t seed) {
  std::ofstream out(file);
  std::uint32_t state = seed;
  const auto draw = [&](std::size_t n) {
    state = state * 1664525U + 1013904223U;
    return (state >> 16) % n;
  };
  for (int i = 0; i < lines; ++i) {
    const Subject& s = kSubjects[draw(kSubjects.size())];
    out << kArticles[draw(kArticles.size())] << ' ' << s.noun << ' ' << s.verb << ' '
        << s.preposition << " the " << kPlaces[draw(kPlaces.size())] << '\n';
  }
}

}  // namespace

void write_ptb_corpus(const std::filesystem::path& dir, int train_lines, int valid_lines) {
  std::filesystem::create_directories(dir);
  write_lines(dir / "ptb.train.txt", train_lines, 1);
  write_lines(dir / "ptb.valid.txt", valid_lines, 2);
}

}  // namespace commsgd::testing
