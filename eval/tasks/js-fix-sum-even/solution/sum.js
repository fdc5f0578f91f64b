function sumEven(numbers) {
  let total = 0;
  for (const n of numbers) {
    if (n % 2 === 0) total += n;
  }
  return total;
}

module.exports = { sumEven };
