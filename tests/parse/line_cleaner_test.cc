#include <gtest/gtest.h>
TEST(Placeholder, NotWrittenYet) { FAIL(); }
