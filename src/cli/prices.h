// `cgov prices`: the price catalog cgov prices GPUs with (built in, or --price-catalog FILE), and
// which entry a GPU name resolves to (--gpu "NVIDIA A100-SXM4-80GB").
#ifndef CGOV_CLI_PRICES_H_
#define CGOV_CLI_PRICES_H_

namespace cgov::cli {

int RunPrices(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_PRICES_H_
