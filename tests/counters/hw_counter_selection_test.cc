// --hw-counters' text: all, none or a list of hw_counters/ file names.
#include "collector/counters/hw_counter_selection.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

using Mode = HwCounterSelection::Mode;

TEST(HwCounterSelectionTest, AllNoneAndLists) {
  std::string why;
  EXPECT_EQ(ParseHwCounterSelection("all", &why), HwCounterSelection{});
  EXPECT_EQ(ParseHwCounterSelection("none", &why), (HwCounterSelection{Mode::kNone, {}}));
  // Sorted and each once, whatever order and repeats the operator wrote.
  EXPECT_EQ(ParseHwCounterSelection("out_of_sequence,np_cnp_sent,out_of_sequence", &why),
            (HwCounterSelection{Mode::kListed, {"np_cnp_sent", "out_of_sequence"}}));
  EXPECT_EQ(ParseHwCounterSelection("out_of_buffer", &why),
            (HwCounterSelection{Mode::kListed, {"out_of_buffer"}}));
}

TEST(HwCounterSelectionTest, WantsWhatIsSelected) {
  std::string why;
  const HwCounterSelection all = *ParseHwCounterSelection("all", &why);
  const HwCounterSelection none = *ParseHwCounterSelection("none", &why);
  const HwCounterSelection listed = *ParseHwCounterSelection("np_cnp_sent,out_of_buffer", &why);
  EXPECT_TRUE(all.Wants("rx_write_requests"));
  EXPECT_TRUE(all.ReadsAny());
  EXPECT_FALSE(none.Wants("out_of_buffer"));
  EXPECT_FALSE(none.ReadsAny());
  EXPECT_TRUE(listed.ReadsAny());
  EXPECT_TRUE(listed.Wants("np_cnp_sent"));
  EXPECT_TRUE(listed.Wants("out_of_buffer"));
  EXPECT_FALSE(listed.Wants("out_of_sequence"));
  EXPECT_FALSE(listed.Wants("np_cnp"));  // whole names only
}

TEST(HwCounterSelectionTest, RefusesWhatCannotBeAFileOfHwCounters) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c :
       {Case{"", "empty name"}, Case{"a,,b", "empty name"}, Case{"out_of_buffer,", "empty name"},
        Case{",a", "empty name"}, Case{"all,out_of_buffer", "\"all\" cannot be part of a list"},
        Case{"a,none", "\"none\" cannot be part of a list"},
        Case{"../counters/symbol_error", "not a file name of hw_counters/"},
        Case{"..", "not a file name"}, Case{"lifespan", "a setting"}}) {
    std::string why;
    EXPECT_EQ(ParseHwCounterSelection(c.text, &why), std::nullopt) << c.text;
    EXPECT_NE(why.find(c.says), std::string::npos) << c.text << ": " << why;
  }
}

TEST(HwCounterSelectionTest, FormatsBackToTheOptionsText) {
  std::string why;
  for (const char* text : {"all", "none", "np_cnp_sent,out_of_buffer"}) {
    EXPECT_EQ(FormatHwCounterSelection(*ParseHwCounterSelection(text, &why)), text);
  }
  EXPECT_EQ(FormatHwCounterSelection(*ParseHwCounterSelection("b,a,b", &why)), "a,b");
}

TEST(HwCounterSelectionTest, MissingNamesAreTheListedOnesNoPortHas) {
  std::string why;
  const std::vector<std::string> ib_port = {"out_of_buffer", "out_of_sequence",
                                            "rx_write_requests"};
  EXPECT_EQ(
      MissingHwCounters(*ParseHwCounterSelection("np_cnp_sent,out_of_buffer,rp_cnp_handled", &why),
                        ib_port),
      (std::vector<std::string>{"np_cnp_sent", "rp_cnp_handled"}));
  EXPECT_EQ(MissingHwCounters(*ParseHwCounterSelection("out_of_buffer", &why), ib_port),
            std::vector<std::string>{});
  EXPECT_EQ(MissingHwCounters(*ParseHwCounterSelection("all", &why), {}),
            std::vector<std::string>{});
  EXPECT_EQ(MissingHwCounters(*ParseHwCounterSelection("none", &why), {}),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace fabtrack
