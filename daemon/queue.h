/* `aurorad --queue -c FILE`: the queue as `mailq` shows postfix's, read
 * from the directories and state_dir/counters alone (the daemon need not
 * run, and nothing is written). */
#ifndef AURORAD_QUEUE_H
#define AURORAD_QUEUE_H

#include <stdio.h>

#include "config.h"

/* Prints to out; returns 0, or 1 when the outbox cannot be listed. */
int queue_print(const aurorad_config *c, const char *cfg_path, int max_listed, FILE *out);

#endif
