// data/dataset.cc — batch filling and the dataset factory (see dataset.h).
#include "data/dataset.h"

#include "data/addition.h"
#include "data/text_file.h"

namespace zt {

void fill_batch(const Dataset& data, uint64_t seed, uint64_t step, uint64_t first_index, std::size_t count,
                int32_t* out) {
  const std::size_t row = data.context() + 1;
  for (std::size_t i = 0; i < count; ++i) data.sample(seed, step, first_index + i, out + i * row);
}

std::unique_ptr<Dataset> make_dataset(const std::string& path, std::size_t context, int digits) {
  if (!path.empty()) return std::make_unique<TextFileDataset>(path, context);
  AdditionConfig config;
  config.context = context;
  config.digits = digits;
  return std::make_unique<AdditionDataset>(config);
}

}  // namespace zt
