/* SPDX-License-Identifier: BSD-3-Clause */
/* `mpiscope-engine --describe`: what the engine measures and how Python
 * must turn its rows into samples, as one JSON object on stdout
 * (docs/reference/formats/raw-files.md, "--describe"). Needs no MPI. */
#ifndef MPISCOPE_DESCRIBE_H
#define MPISCOPE_DESCRIBE_H

#define DESCRIBE_VERSION 1

/* Prints the description; returns the process exit code. */
int describe_engine(void);

#endif
