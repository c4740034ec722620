#include "common/event_queue.h"

#include <poll.h>

#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace kubelet {
namespace {

bool Readable(int fd) {
  struct pollfd p {
    fd, POLLIN, 0
  };
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(EventQueueTest, OwnDescriptorIsReadableWhileItemsArePending) {
  EventQueue<int> q;
  EXPECT_FALSE(Readable(q.fd()));
  q.Push(1);
  q.Push(2);
  EXPECT_TRUE(Readable(q.fd()));
  EXPECT_EQ(q.Drain(), (std::vector<int>{1, 2}));
  EXPECT_FALSE(Readable(q.fd()));
}

TEST(EventQueueTest, QueuesOnADoorbellRingItAndLeaveTheClearToTheConsumer) {
  Doorbell bell;
  EventQueue<int> a(&bell);
  EventQueue<std::string> b(&bell);
  EXPECT_EQ(a.fd(), bell.fd());
  EXPECT_FALSE(Readable(bell.fd()));
  a.Push(1);
  EXPECT_TRUE(Readable(bell.fd()));
  // Draining one queue leaves the bell ringing: another may still hold items.
  b.Push("x");
  EXPECT_EQ(a.Drain(), (std::vector<int>{1}));
  EXPECT_TRUE(Readable(bell.fd()));
  bell.Clear();
  EXPECT_FALSE(Readable(bell.fd()));
  EXPECT_EQ(b.Drain(), (std::vector<std::string>{"x"}));
  // An item pushed after the Clear rings again: none is missed.
  bell.Clear();
  a.Push(2);
  EXPECT_TRUE(Readable(bell.fd()));
}

TEST(EventQueueTest, DoorbellOutlivesItsQueuesDescriptor) {
  Doorbell bell;
  { EventQueue<int> q(&bell); }  // does not close the bell's descriptor
  bell.Ring();
  EXPECT_TRUE(Readable(bell.fd()));
}

}  // namespace
}  // namespace kubelet
