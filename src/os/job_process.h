// Running a job as a child: spawn it, forward signals to it, reap it, and report how it ended.
//
// The job stays in cgov's process group and session, so a terminal's Ctrl-C reaches it directly;
// cgov forwards only the signals a process sent to cgov itself (si_code SI_USER, SI_QUEUE,
// SI_TKILL), never the ones the terminal sent to the whole group (SI_KERNEL), so each arrives once.
#ifndef CGOV_OS_JOB_PROCESS_H_
#define CGOV_OS_JOB_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace cgov {

// Exit statuses cgov run uses for a job it could not start (as shells do).
inline constexpr int kExitCommandNotFound = 127;
inline constexpr int kExitCannotExecute = 126;

// The job's exit code: its own code, or 128 + N when signal N ended it.
int ExitCodeFromWaitStatus(int wait_status);

// The signals cgov run relays to the job, in the order the header lists them.
const std::vector<int>& ForwardedSignals();

// Decides whether a signal cgov received should be relayed: true when a process sent it to cgov
// (kill, sigqueue, tgkill), false when the kernel did (the terminal's ^C, ^\, hangup), because the
// kernel delivers those to the whole foreground process group, the job included.
bool ShouldForward(const siginfo_t& info);

struct JobOutcome {
  int exit_code = 0;  // as ExitCodeFromWaitStatus
  int wait_status = 0;
  std::vector<int> forwarded;  // signal numbers relayed to the job, in order
};

// Owns the job's lifetime. Construct it in the main thread before any other thread starts: it
// blocks the forwarded signals, SIGCHLD and SIGPIPE in the calling thread, and threads created
// afterwards inherit that mask, so only Wait() ever sees those signals.
class JobSupervisor {
 public:
  // Also calls IgnoreFileSizeSignal().
  JobSupervisor();
  ~JobSupervisor();  // restores the original signal mask
  JobSupervisor(const JobSupervisor&) = delete;
  JobSupervisor& operator=(const JobSupervisor&) = delete;

  // Starts argv[0] found on PATH (execvp semantics) with the caller's environment, file
  // descriptors, signal dispositions and original signal mask. Errors: kNotFound (-> 127) or
  // kPermissionDenied/kInvalidArgument (-> 126), with a one-line reason naming the command.
  Result<pid_t> Spawn(const std::vector<std::string>& argv);

  // Waits for the job to end, relaying signals and reaping every child (cgov is a child
  // subreaper, so a double-forking job's orphans come back to it and leave no zombies).
  // `on_signal` (may be empty) is told of each relayed signal.
  JobOutcome Wait(const std::function<void(int signal)>& on_signal);

  pid_t job_pid() const { return job_pid_; }

 private:
  sigset_t original_mask_;
  sigset_t waited_;
  pid_t job_pid_ = -1;
};

// Ignores SIGXFSZ in cgov when its action is the default: a file-size limit (ulimit -f) reached
// is then a failed write, said as a full disk is, not death. A job spawned later still gets the
// default action. Call before any thread exists; calling it again changes nothing.
void IgnoreFileSizeSignal();

// Maps a spawn errno to the exit code cgov run returns for it.
int ExitCodeForSpawnError(StatusCode code);

}  // namespace cgov

#endif  // CGOV_OS_JOB_PROCESS_H_
