/* Open MPI under mpirun --enable-recovery, without cellgan: do the survivors of
 * a kill -9 get through MPI_Finalize, and what does mpirun return?
 * Built and run by mpi_recovery_probe.sh (docs/results.md, "Open MPI under
 * --enable-recovery").
 *
 * Ranks 0, 2, 3 wait 4 s (Isending BYTES to rank 1 every 100 ms when BYTES > 0),
 * free the sends, then call MPI_Finalize and return $RC0 (rank 0) or 0. Rank 1
 * sleeps until it is killed from outside; with NOKILL set it takes part like
 * the others; with NOFINALIZE set the survivors leave without MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int bytes = argc > 1 ? atoi(argv[1]) : 0;
  char* buf = calloc((size_t)bytes + 1, 1);
  printf("rank %d pid %d\n", rank, (int)getpid());
  fflush(stdout);
  if (rank == 1 && !getenv("NOKILL"))
    for (;;) sleep(1);
  MPI_Request req[64];
  int n = 0;
  for (int i = 0; i < 40; ++i) {
    if (bytes > 0 && rank != 1 && n < 64) MPI_Isend(buf, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req[n++]);
    usleep(100000);
  }
  for (int i = 0; i < n; ++i) MPI_Request_free(&req[i]);
  if (getenv("NOFINALIZE")) {  /* leave without MPI_Finalize */
    fprintf(stderr, "rank %d finalized (skipped)\n", rank);
    fflush(stderr);
    _exit(rank == 0 && getenv("RC0") ? atoi(getenv("RC0")) : 0);
  }
  MPI_Finalize();
  fprintf(stderr, "rank %d finalized\n", rank);
  free(buf);
  return rank == 0 && getenv("RC0") ? atoi(getenv("RC0")) : 0;
}
