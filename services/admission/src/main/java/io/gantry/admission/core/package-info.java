/**
 * The pure core of admission: what a tenant may submit, and what state a job is in.
 *
 * <p>It decides:
 * <ul>
 *   <li>whether a job spec is acceptable ({@link io.gantry.admission.core.JobSpecValidator}): it works on the
 *       parsed JSON tree, so every bad field is reported at once with its path ({@code tasks[0].gpus}), and it
 *       checks GPU requests against the {@link io.gantry.admission.core.ClusterLimits} the registered nodes
 *       imply ({@link io.gantry.admission.core.NodeCatalog});</li>
 *   <li>the state a user sees ({@link io.gantry.admission.core.JobStatus}): a join over the job's events that
 *       gives the same answer whatever order the events of the different topics arrive in.</li>
 * </ul>
 *
 * <p>It does not decide when or where a job runs (queue and placement do), does not talk to Kafka or
 * PostgreSQL, and does not know who the caller is: tenancy checks stay in the HTTP adapter.
 */
package io.gantry.admission.core;
