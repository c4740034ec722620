/*
 * pause: the pod sandbox's infra process for the e2e harness.
 *
 * Stands in for registry.k8s.io/pause (the harness imports it under that name
 * because the test machines cannot pull from the internet). Contract, matching
 * the upstream pause binary closely enough for the kubelet and containerd:
 *   - runs as PID 1 of the sandbox and holds its namespaces open by blocking
 *     in pause();
 *   - reaps every child it inherits (processes of containers sharing the pod's
 *     PID namespace are reparented to it), so no zombies pile up;
 *   - exits 0 on SIGINT or SIGTERM, so StopPodSandbox finishes without
 *     escalating to SIGKILL.
 * Built with `gcc -static -O2` by containerd-env.sh; it needs nothing from
 * the image but itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_terminate(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  int saved = errno; /* a handler must not clobber the interrupted code's errno */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

static int install(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  /* SA_NOCLDSTOP: stopped children are not ours to care about. */
  sa.sa_flags = (sig == SIGCHLD) ? SA_NOCLDSTOP | SA_RESTART : 0;
  return sigaction(sig, &sa, NULL);
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    printf("pause (kubelet-cpp e2e harness)\n");
    return 0;
  }
  if (getpid() != 1) {
    /* Same warning as upstream: outside a PID namespace reaping is partial. */
    fprintf(stderr, "Warning: pause should be the first process\n");
  }
  if (install(SIGINT, on_terminate) < 0 || install(SIGTERM, on_terminate) < 0 ||
      install(SIGCHLD, on_child) < 0) {
    perror("sigaction");
    return 1;
  }
  for (;;) {
    pause();
  }
  return 42; /* unreachable */
}
