/* batond's log: leveled lines on stderr. Only batond logs (STYLE rule 12). */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Set once in main, before the loop runs: the one mutable global. */
void log_set_level(enum log_level level);
int log_enabled(enum log_level level);

void log_write(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_write(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_write(LOG_INFO, __VA_ARGS__)
#define log_debug(...)                                                         \
        do {                                                                   \
                if (log_enabled(LOG_DEBUG)) {                                  \
                        log_write(LOG_DEBUG, __VA_ARGS__);                     \
                }                                                              \
        } while (0)

#endif /* SERVER_LOG_H */
