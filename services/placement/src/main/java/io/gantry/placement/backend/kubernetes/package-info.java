/**
 * The {@code kubernetes} execution backend: inventory from Node objects, each task a pod bound to the node placement
 * chose ({@code nodeName}; the Kubernetes scheduler never queues it), a headless service and environment for the
 * gang's rendezvous, outcomes from pod and node watches. The only package of placement that uses fabric8; it decides
 * nothing about where work goes (that is {@code io.gantry.placement.core}), it only carries decisions out and reports
 * what happened.
 */
package io.gantry.placement.backend.kubernetes;
