"""Training code for Conditional HydraGAN and the Probabilistic Parallel Time Network.

Each model will be a plain ``train(config, on_progress, should_stop)`` function
with no Streamlit import; nothing lives here yet.
"""
