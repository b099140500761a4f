/**
 * GPU health on the local backend: parsers for {@code nvidia-smi --query-gpu} samples and the kernel log's
 * {@code NVRM: Xid} lines, and a monitor that turns successive samples into device faults (edge-triggered: a
 * condition is reported when it appears, not at every sample). Pure parsing and diffing; the commands and files are
 * read by {@link io.gantry.placement.backend.LocalBackend}.
 */
package io.gantry.placement.backend.health;
