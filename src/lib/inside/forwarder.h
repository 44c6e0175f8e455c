/* The sandbox side of the filtered network. The sandbox has its own
 * network namespace with loopback only; the init listens there on the
 * proxy ports and each network.localhost port, and relays every connection
 * over the bind-mounted unix socket to the proxy on the host. */
#pragma once

#include "base/error.h"
#include "inside/inside.h"

/* Where the host's proxy socket appears inside the sandbox. */
#define SANDBOX_PROXY_SOCKET SANDBOX_DIR "/proxy.sock"
/* The init option that carries the listeners: "--forward=proxy:3128,
 * proxy:1080,localhost:5432,credential:14100:0" (a credential endpoint's
 * port, then its index for the proxy). */
#define FORWARD_ARG "--forward="

struct forwarder;

/* Listens on every port of the spec (the part after FORWARD_ARG). */
int forwarder_start(struct forwarder **out, const char *spec, struct error *err);
/* An epoll descriptor: readable when forwarder_dispatch has work. */
int forwarder_fd(const struct forwarder *fw);
void forwarder_dispatch(struct forwarder *fw);
