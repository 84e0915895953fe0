#include "trainer/commsgd_train.hpp"

int main(int argc, char** argv) {
  return commsgd::trainer::commsgd_train_main(argc, argv);
}
