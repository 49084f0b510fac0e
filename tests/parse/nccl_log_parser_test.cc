#include <gtest/gtest.h>
TEST(Placeholder, NotWrittenYet) { FAIL() << "test file not written yet"; }
