/* The pod sandbox's process (the role of registry.k8s.io/pause): it holds the pod's namespaces,
 * reaps the orphans reparented to it, and exits at once on SIGINT or SIGTERM. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) { _exit(0); }

static void on_child(int sig) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = on_stop};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
