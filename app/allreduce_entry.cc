// fabtrack-allreduce's main: the harness (collector/harness) with a recorder
// that writes the result file and stores the run (app/run_recorder.h). The
// one place the harness and the store meet.
#include <mpi.h>

#include "app/run_recorder.h"
#include "collector/harness/run_sink.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  auto make_recorder = [](std::optional<fabtrack::DatabaseChoice> database,
                          std::optional<std::string> output, std::ostream& notices) {
    return std::unique_ptr<fabtrack::harness::RunSink>(
        new fabtrack::app::ResultRecorder(std::move(database), std::move(output), notices));
  };
  int code = fabtrack::harness::RunHarness(argc, argv, make_recorder);
  // Ranks agree on the exit code so mpirun reports the worst one.
  int worst = code;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
