/* chaos-delayer: holds each packet of an NFQUEUE for a random delay and
 * duplicates some, so that one node's links are slow, jittery, reordering
 * and duplicating (the slow-link nemesis, docs/chaos.md).
 *
 *   chaos-delayer --queue N --delay-ms D [--jitter-ms J] [--dup-pct P]
 *                 [--seed S] [--mark M]
 *
 * Run it in the namespace whose iptables rules send packets to queue N
 * (`-j NFQUEUE --queue-num N --queue-bypass`, skipping packets marked M).
 * Each packet is held for D + uniform(-J, +J) ms, drawn per packet, and
 * then accepted (NF_ACCEPT): packets drawn shorter delays overtake those
 * before them. With --dup-pct, that percentage of the packets is also sent
 * a second time, a copy written to a raw socket with mark M (so the rules
 * let it through) after its own random delay. The kernel queues at most
 * 8192 packets; a packet beyond that is accepted at once (fail-open).
 *
 * SIGINT or SIGTERM: every held packet is accepted at once and the
 * delayer prints what it did on stderr (packets, their hold times,
 * reorderings, duplicates) and exits 0. Exit 1 on a setup error. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#define MAX_HELD     65536
#define QUEUE_MAXLEN 8192

/* A packet held until `due`: a verdict to give (id), or a copy to send. */
struct held {
        uint64_t due;
        uint64_t arrived;
        uint64_t seq;
        uint32_t id;
        int len; /* > 0: a duplicate's copy in data */
        unsigned char *data;
};

struct delayer {
        struct nfq_handle *h;
        struct nfq_q_handle *qh;
        int raw; /* the raw socket duplicates are sent on */
        uint32_t mark;
        uint64_t delay_ns, jitter_ns;
        unsigned dup_pct;
        uint64_t rng;
        struct held *heap;
        size_t n;
        uint64_t seq, max_released_seq;
        /* What it did. */
        uint64_t packets, released, accepted_at_once, at_stop, reordered, dups,
            dup_errors;
        uint64_t hold_min, hold_max, hold_sum;
        uint64_t buckets[10]; /* hold times in 20 ms buckets, the last 180+ */
};

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: reproducible per seed, no global state. */
static uint64_t rnd(struct delayer *d)
{
        d->rng ^= d->rng >> 12;
        d->rng ^= d->rng << 25;
        d->rng ^= d->rng >> 27;
        return d->rng * 2685821657736338717ull;
}

/* delay +- jitter, uniform, never below 0. */
static uint64_t draw_delay(struct delayer *d)
{
        int64_t v = (int64_t)d->delay_ns;
        if (d->jitter_ns > 0) {
                v += (int64_t)(rnd(d) % (2 * d->jitter_ns + 1)) -
                     (int64_t)d->jitter_ns;
        }
        return v < 0 ? 0 : (uint64_t)v;
}

static void heap_swap(struct held *a, struct held *b)
{
        struct held t = *a;
        *a = *b;
        *b = t;
}

static int heap_push(struct delayer *d, const struct held *e)
{
        size_t i;
        if (d->n == MAX_HELD) {
                return -1;
        }
        i = d->n++;
        d->heap[i] = *e;
        while (i > 0 && d->heap[(i - 1) / 2].due > d->heap[i].due) {
                heap_swap(&d->heap[(i - 1) / 2], &d->heap[i]);
                i = (i - 1) / 2;
        }
        return 0;
}

static struct held heap_pop(struct delayer *d)
{
        struct held top = d->heap[0];
        size_t i = 0;
        d->heap[0] = d->heap[--d->n];
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < d->n && d->heap[l].due < d->heap[m].due) {
                        m = l;
                }
                if (r < d->n && d->heap[r].due < d->heap[m].due) {
                        m = r;
                }
                if (m == i) {
                        break;
                }
                heap_swap(&d->heap[m], &d->heap[i]);
                i = m;
        }
        return top;
}

/* Send a duplicate: the IPv4 packet as it was queued, to its destination. */
static void send_copy(struct delayer *d, const struct held *e)
{
        struct sockaddr_in to = {.sin_family = AF_INET};
        const struct iphdr *ip = (const struct iphdr *)e->data;
        memcpy(&to.sin_addr, &ip->daddr, sizeof to.sin_addr);
        if (sendto(d->raw, e->data, (size_t)e->len, 0, (struct sockaddr *)&to,
                   sizeof to) < 0) {
                d->dup_errors++;
        } else {
                d->dups++;
        }
}

/* Give the verdict of (or send) the held packet e. */
static void release(struct delayer *d, const struct held *e, uint64_t t)
{
        uint64_t hold;
        if (e->len > 0) {
                send_copy(d, e);
                free(e->data);
                return;
        }
        nfq_set_verdict(d->qh, e->id, NF_ACCEPT, 0, NULL);
        hold = t - e->arrived;
        d->hold_sum += hold;
        if (d->released++ == 0 || hold < d->hold_min) {
                d->hold_min = hold;
        }
        if (hold > d->hold_max) {
                d->hold_max = hold;
        }
        d->buckets[hold / 20000000u < 9 ? hold / 20000000u : 9]++;
        if (e->seq < d->max_released_seq) {
                d->reordered++;
        } else {
                d->max_released_seq = e->seq;
        }
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg,
                     struct nfq_data *nfa, void *arg)
{
        struct delayer *d = arg;
        struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
        unsigned char *payload = NULL;
        int len = nfq_get_payload(nfa, &payload);
        uint64_t t = now_ns();
        struct held e = {.arrived = t, .seq = ++d->seq};
        (void)msg;
        if (ph == NULL) {
                return 0;
        }
        e.id = ntohl(ph->packet_id);
        e.due = t + draw_delay(d);
        d->packets++;
        if (heap_push(d, &e) != 0) {
                d->accepted_at_once++;
                return nfq_set_verdict(qh, e.id, NF_ACCEPT, 0, NULL);
        }
        if (d->dup_pct > 0 && len >= (int)sizeof(struct iphdr) &&
            rnd(d) % 100 < d->dup_pct) {
                struct held c = {.arrived = t, .len = len};
                c.data = malloc((size_t)len);
                if (c.data == NULL) {
                        return 0;
                }
                memcpy(c.data, payload, (size_t)len);
                c.due = t + draw_delay(d);
                if (heap_push(d, &c) != 0) {
                        free(c.data);
                }
        }
        return 0;
}

static void report(const struct delayer *d)
{
        uint64_t n = d->released;
        int i;
        fprintf(
            stderr,
            "chaos-delayer: delay %.0f +- %.0f ms, %u%% duplicated: %" PRIu64
            " packets held, hold ms min %.1f mean %.1f max %.1f, %" PRIu64
            " overtaken by a later packet, %" PRIu64
            " duplicates sent (%" PRIu64 " failed), %" PRIu64
            " accepted at once (65536 held already), %" PRIu64
            " let go at the stop\n",
            d->delay_ns / 1e6, d->jitter_ns / 1e6, d->dup_pct, n,
            d->hold_min / 1e6, n ? (double)d->hold_sum / (double)n / 1e6 : 0.0,
            d->hold_max / 1e6, d->reordered, d->dups, d->dup_errors,
            d->accepted_at_once, d->at_stop);
        fprintf(stderr, "chaos-delayer: hold ms histogram:");
        for (i = 0; i < 10; i++) {
                fprintf(stderr, " %s%d:%" PRIu64, i == 9 ? ">=" : "", i * 20,
                        d->buckets[i]);
        }
        fprintf(stderr, "\n");
}

static int usage(void)
{
        fprintf(stderr, "usage: chaos-delayer --queue N --delay-ms D "
                        "[--jitter-ms J] [--dup-pct P] "
                        "[--seed S] [--mark M]\n");
        return 1;
}

static int parse(struct delayer *d, unsigned *queue, int argc, char **argv)
{
        int i;
        for (i = 1; i + 1 < argc; i += 2) {
                unsigned long v = strtoul(argv[i + 1], NULL, 0);
                if (strcmp(argv[i], "--queue") == 0) {
                        *queue = (unsigned)v;
                } else if (strcmp(argv[i], "--delay-ms") == 0) {
                        d->delay_ns = v * 1000000u;
                } else if (strcmp(argv[i], "--jitter-ms") == 0) {
                        d->jitter_ns = v * 1000000u;
                } else if (strcmp(argv[i], "--dup-pct") == 0) {
                        d->dup_pct = (unsigned)(v > 100 ? 100 : v);
                } else if (strcmp(argv[i], "--seed") == 0) {
                        d->rng = v * 0x9E3779B97F4A7C15ull + 1;
                } else if (strcmp(argv[i], "--mark") == 0) {
                        d->mark = (uint32_t)v;
                } else {
                        return -1;
                }
        }
        return i == argc && *queue != ~0u ? 0 : -1;
}

/* Open the queue, the raw socket and the signalfd; 0 or -1 (said why). */
static int open_all(struct delayer *d, unsigned queue, int *sfd)
{
        sigset_t set;
        d->h = nfq_open();
        if (d->h == NULL || nfq_bind_pf(d->h, AF_INET) < 0) {
                perror("chaos-delayer: nfq_open");
                return -1;
        }
        d->qh = nfq_create_queue(d->h, (uint16_t)queue, on_packet, d);
        if (d->qh == NULL ||
            nfq_set_mode(d->qh, NFQNL_COPY_PACKET, 0xffff) < 0) {
                perror("chaos-delayer: nfq_create_queue");
                return -1;
        }
        nfq_set_queue_maxlen(d->qh, QUEUE_MAXLEN);
        nfq_set_queue_flags(d->qh, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
        nfnl_rcvbufsiz(nfq_nfnlh(d->h), 8u << 20);
        d->raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
        if (d->raw < 0 || setsockopt(d->raw, SOL_SOCKET, SO_MARK, &d->mark,
                                     sizeof d->mark) < 0) {
                perror("chaos-delayer: raw socket");
                return -1;
        }
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        *sfd = signalfd(-1, &set, SFD_CLOEXEC);
        return *sfd < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
        struct delayer d = {.mark = 0x62, .rng = 88172645463325252ull};
        unsigned queue = ~0u;
        int sfd = -1, fd;
        char buf[65536 + 256];
        if (parse(&d, &queue, argc, argv) != 0) {
                return usage();
        }
        d.heap = calloc(MAX_HELD, sizeof *d.heap);
        if (d.heap == NULL || open_all(&d, queue, &sfd) != 0) {
                return 1;
        }
        fd = nfq_fd(d.h);
        for (;;) {
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                                      {.fd = sfd, .events = POLLIN}};
                uint64_t t = now_ns();
                int timeout = -1;
                while (d.n > 0 && d.heap[0].due <= t) {
                        struct held e = heap_pop(&d);
                        release(&d, &e, t);
                }
                if (d.n > 0) {
                        timeout = (int)((d.heap[0].due - t + 999999) / 1000000);
                }
                if (poll(p, 2, timeout) < 0 && errno != EINTR) {
                        perror("chaos-delayer: poll");
                        break;
                }
                if (p[1].revents & POLLIN) {
                        break;
                }
                if (p[0].revents & POLLIN) {
                        ssize_t r;
                        /* Drain the socket: a packet waits no longer than its
                         * draw. */
                        while ((r = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) >
                               0) {
                                nfq_handle_packet(d.h, buf, (int)r);
                        }
                }
        }
        /* Stopping: the held packets go at once, outside the statistics. */
        while (d.n > 0) {
                struct held e = heap_pop(&d);
                if (e.len > 0) {
                        free(e.data);
                } else {
                        nfq_set_verdict(d.qh, e.id, NF_ACCEPT, 0, NULL);
                        d.at_stop++;
                }
        }
        report(&d);
        nfq_destroy_queue(d.qh);
        nfq_close(d.h);
        return 0;
}
